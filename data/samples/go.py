"""Go samples: a module with table-driven subtests, and a multi-package module with a
dependency from the Go module proxy (github.com/google/go-cmp, pinned by go.sum).

Test ids are `go test -json` names (`gotest-json`): `TestName`, `TestName/sub_case`
(spaces in subtest names become underscores), without the package.
"""

from __future__ import annotations

from data.samples import Commit, Issue, Planted, SampleRepo, sample
from data.samples import block as _d
from data.samples import replaced as _sub
from envs.models import Language, TaskKind, TestStatus

P, F, S = TestStatus.PASSED, TestStatus.FAILED, TestStatus.SKIPPED




# --------------------------------------------------------------------------- go-tabular

_TAB_BYTES_0 = _d('''
    // Package tabular formats and parses byte sizes such as "1.5 KiB".
    package tabular

    import (
    \t"fmt"
    \t"strconv"
    \t"strings"
    )

    var units = []string{"B", "KiB", "MiB", "GiB", "TiB"}

    // FormatBytes renders n in the largest binary unit that keeps it at least 1.
    func FormatBytes(n int64) string {
    \tif n < 1024 {
    \t\treturn fmt.Sprintf("%d B", n)
    \t}
    \tvalue := float64(n)
    \ti := 0
    \tfor value >= 1024 && i < len(units)-1 {
    \t\tvalue /= 1024
    \t\ti++
    \t}
    \treturn fmt.Sprintf("%.1f %s", value, units[i])
    }

    // ParseBytes reads "42 B", "1.5 KiB" or "10 MiB".
    func ParseBytes(s string) (int64, error) {
    \tfields := strings.Fields(s)
    \tif len(fields) != 2 {
    \t\treturn 0, fmt.Errorf("tabular: want '<number> <unit>', got %q", s)
    \t}
    \tvalue, err := strconv.ParseFloat(fields[0], 64)
    \tif err != nil {
    \t\treturn 0, fmt.Errorf("tabular: bad number in %q: %w", s, err)
    \t}
    \tfor i, u := range units {
    \t\tif fields[1] == u {
    \t\t\treturn int64(value * float64(int64(1)<<(10*i))), nil
    \t\t}
    \t}
    \treturn 0, fmt.Errorf("tabular: unknown unit %q", fields[1])
    }
''')

_TAB_BYTES_FIXED = _sub(_TAB_BYTES_0, "\t\tif fields[1] == u {", "\t\tif strings.EqualFold(fields[1], u) {")

_TAB_BYTES_REFACTORED = _sub(
    _sub(_TAB_BYTES_FIXED, 'var units = []string{"B", "KiB", "MiB", "GiB", "TiB"}\n\n', ""),
    "\t\t\treturn int64(value * float64(int64(1)<<(10*i))), nil",
    "\t\t\treturn int64(value * float64(unitFactor(i))), nil",
)

_TAB_UNITS = _d('''
    package tabular

    // units are the binary units, each 1024 times the one before.
    var units = []string{"B", "KiB", "MiB", "GiB", "TiB"}

    // unitFactor is the number of bytes in units[i].
    func unitFactor(i int) int64 {
    \treturn int64(1) << (10 * i)
    }
''')

_TAB_TEST_0 = _d('''
    package tabular

    import "testing"

    func TestFormatBytes(t *testing.T) {
    \ttests := []struct {
    \t\tname string
    \t\tin   int64
    \t\twant string
    \t}{
    \t\t{"zero", 0, "0 B"},
    \t\t{"below one kibibyte", 1023, "1023 B"},
    \t\t{"one kibibyte", 1024, "1.0 KiB"},
    \t\t{"one and a half mebibytes", 1572864, "1.5 MiB"},
    \t}
    \tfor _, tc := range tests {
    \t\tt.Run(tc.name, func(t *testing.T) {
    \t\t\tif got := FormatBytes(tc.in); got != tc.want {
    \t\t\t\tt.Errorf("FormatBytes(%d) = %q, want %q", tc.in, got, tc.want)
    \t\t\t}
    \t\t})
    \t}
    }

    func TestParseBytes(t *testing.T) {
    \ttests := []struct {
    \t\tname string
    \t\tin   string
    \t\twant int64
    \t}{
    \t\t{"bytes", "42 B", 42},
    \t\t{"fractional kibibytes", "1.5 KiB", 1536},
    \t\t{"gibibytes", "2 GiB", 2 << 30},
    \t}
    \tfor _, tc := range tests {
    \t\tt.Run(tc.name, func(t *testing.T) {
    \t\t\tgot, err := ParseBytes(tc.in)
    \t\t\tif err != nil || got != tc.want {
    \t\t\t\tt.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
    \t\t\t}
    \t\t})
    \t}
    }

    func TestParseBytesErrors(t *testing.T) {
    \tfor _, in := range []string{"", "12", "x KiB", "3 parsecs"} {
    \t\tif _, err := ParseBytes(in); err == nil {
    \t\t\tt.Errorf("ParseBytes(%q): no error", in)
    \t\t}
    \t}
    }
''')

_TAB_TEST_FIX = _sub(
    _TAB_TEST_0,
    '\t\t{"gibibytes", "2 GiB", 2 << 30},\n',
    '\t\t{"gibibytes", "2 GiB", 2 << 30},\n'
    '\t\t{"lowercase unit", "10 kib", 10240},\n'
    '\t\t{"upper case unit", "1 MIB", 1 << 20},\n',
)

_TAB_TEST_HEAD = _TAB_TEST_FIX + "\n" + _d('''
    func TestRoundTrip(t *testing.T) {
    \ttests := []struct {
    \t\tname string
    \t\tn    int64
    \t}{
    \t\t{"whole kibibytes", 3 << 10},
    \t\t// known issue (#13): one decimal loses bytes
    \t\t{"fractional kibibytes", 1636},
    \t}
    \tfor _, tc := range tests {
    \t\tt.Run(tc.name, func(t *testing.T) {
    \t\t\tgot, err := ParseBytes(FormatBytes(tc.n))
    \t\t\tif err != nil || got != tc.n {
    \t\t\t\tt.Errorf("round trip of %d = %d, %v", tc.n, got, err)
    \t\t\t}
    \t\t})
    \t}
    }

    func TestParseNegative(t *testing.T) {
    \tt.Skip("negative sizes are not supported yet (#14)")
    \tif n, err := ParseBytes("-1 KiB"); err != nil || n != -1024 {
    \t\tt.Errorf("ParseBytes(-1 KiB) = %d, %v", n, err)
    \t}
    }
''')

_TAB_README_0 = _d('''
    # tabular

    Format and parse byte sizes: `FormatBytes(1536) == "1.5 KiB"`.

        go test ./...
''')

_TAB_README_1 = _TAB_README_0 + "\n" + _d('''
    ## Units

    Binary units only: B, KiB, MiB, GiB and TiB, each 1024 times the one before.
    `FormatBytes` keeps one decimal.
''')


@sample
def sample_go_tabular() -> SampleRepo:
    return SampleRepo(
        name="go-tabular",
        language=Language.GO,
        build_system="go-modules",
        test_framework="gotest",
        description="one Go module, table-driven tests with t.Run subtests, no dependencies",
        commits=(
            Commit("Initial FormatBytes and ParseBytes", {
                "go.mod": "module example.com/tabular\n\ngo 1.16\n",
                "README.md": _TAB_README_0,
                "bytes.go": _TAB_BYTES_0,
                "bytes_test.go": _TAB_TEST_0,
            }, date="2021-05-03T09:00:00+00:00", tag="v0.1.0"),
            Commit("Document the units", {"README.md": _TAB_README_1},
                   date="2022-01-17T18:30:00+00:00"),
            Commit("Fix ParseBytes rejecting lowercase units (#4)\n\nFixes #3", {
                "bytes.go": _TAB_BYTES_FIXED,
                "bytes_test.go": _TAB_TEST_FIX,
            }, date="2022-08-09T12:00:00+00:00"),
            Commit("Move the unit table to units.go", {
                "bytes.go": _TAB_BYTES_REFACTORED,
                "units.go": _TAB_UNITS,
            }, date="2023-06-21T15:15:00+00:00"),
            Commit("Add round-trip tests", {"bytes_test.go": _TAB_TEST_HEAD},
                   date="2024-04-02T10:05:00+00:00", tag="v0.2.0"),
        ),
        expected={
            "TestFormatBytes": P,
            "TestFormatBytes/zero": P,
            "TestFormatBytes/below_one_kibibyte": P,
            "TestFormatBytes/one_kibibyte": P,
            "TestFormatBytes/one_and_a_half_mebibytes": P,
            "TestParseBytes": P,
            "TestParseBytes/bytes": P,
            "TestParseBytes/fractional_kibibytes": P,
            "TestParseBytes/gibibytes": P,
            "TestParseBytes/lowercase_unit": P,
            "TestParseBytes/upper_case_unit": P,
            "TestParseBytesErrors": P,
            "TestRoundTrip": F,
            "TestRoundTrip/whole_kibibytes": P,
            "TestRoundTrip/fractional_kibibytes": F,
            "TestParseNegative": S,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.OTHER, decoy="docs_only"),
            Planted(
                commit=2, issues=(3,),
                fail_to_pass=("TestParseBytes", "TestParseBytes/lowercase_unit",
                              "TestParseBytes/upper_case_unit"),
                pass_to_pass=(
                    "TestFormatBytes", "TestFormatBytes/zero", "TestFormatBytes/below_one_kibibyte",
                    "TestFormatBytes/one_kibibyte", "TestFormatBytes/one_and_a_half_mebibytes",
                    "TestParseBytes/bytes", "TestParseBytes/fractional_kibibytes",
                    "TestParseBytes/gibibytes", "TestParseBytesErrors",
                ),
            ),
            Planted(commit=3, kind=TaskKind.REFACTOR, decoy="refactor"),
        ),
        issues=(
            Issue(3, "ParseBytes(\"10 kib\") fails",
                  "Units typed by hand are often lowercase: `10 kib` or `1 MIB` give "
                  "`unknown unit`.", ("Units should compare case-insensitively.",),
                  created_at="2022-07-25T09:00:00+00:00"),
        ),
    )


# --------------------------------------------------------------------------- go-inventory

_INV_GO_MOD = _d('''
    module example.com/inventory

    go 1.16

    require github.com/google/go-cmp v0.5.6
''')

# what `go mod tidy` wrote (hashes of the modules as the proxy serves them)
_INV_GO_SUM = _d('''
    github.com/google/go-cmp v0.5.6 h1:BKbKCqvP6I+rmFHt06ZmyQtvB8xAkWdhFyr0ZUNZcxQ=
    github.com/google/go-cmp v0.5.6/go.mod h1:v8dTdLbMG2kIc/vJvl+f65V22dbkXbowE6jgT/gNBxE=
    golang.org/x/xerrors v0.0.0-20191204190536-9bdfabe68543 h1:E7g+9GITq07hpfrRu66IVDexMakfv52eLZ2CXBWiKr4=
    golang.org/x/xerrors v0.0.0-20191204190536-9bdfabe68543/go.mod h1:I/5z698sn9Ka8TeJc9MKroUUfqBBauWjQqLJ2OPfmY0=
''')

_INV_STOCK_0 = _d('''
    // Package inventory keeps stock levels per SKU.
    package inventory

    import (
    \t"errors"
    \t"sort"
    )

    // ErrUnknownSKU is returned for a SKU the stock has never seen.
    var ErrUnknownSKU = errors.New("inventory: unknown SKU")

    // Item is one line of stock.
    type Item struct {
    \tSKU      string
    \tQuantity int
    }

    // Stock holds quantities by SKU.
    type Stock struct {
    \tlevels map[string]int
    }

    // New returns an empty Stock.
    func New() *Stock { return &Stock{levels: map[string]int{}} }

    // Add puts n more of sku into stock.
    func (s *Stock) Add(sku string, n int) { s.levels[sku] += n }

    // Remove takes n of sku out of stock.
    func (s *Stock) Remove(sku string, n int) error {
    \tif _, ok := s.levels[sku]; !ok {
    \t\treturn ErrUnknownSKU
    \t}
    \ts.levels[sku] -= n
    \treturn nil
    }

    // Items lists the stock sorted by SKU.
    func (s *Stock) Items() []Item {
    \tout := make([]Item, 0, len(s.levels))
    \tfor sku, q := range s.levels {
    \t\tout = append(out, Item{SKU: sku, Quantity: q})
    \t}
    \tsort.Slice(out, func(i, j int) bool { return out[i].SKU < out[j].SKU })
    \treturn out
    }
''')

_INV_STOCK_FIXED = _sub(
    _sub(
        _INV_STOCK_0,
        'var ErrUnknownSKU = errors.New("inventory: unknown SKU")\n',
        'var ErrUnknownSKU = errors.New("inventory: unknown SKU")\n\n'
        "// ErrInsufficient is returned when more is removed than is in stock.\n"
        'var ErrInsufficient = errors.New("inventory: not enough in stock")\n',
    ),
    "\t\treturn ErrUnknownSKU\n\t}\n",
    "\t\treturn ErrUnknownSKU\n\t}\n\tif s.levels[sku] < n {\n\t\treturn ErrInsufficient\n\t}\n",
)

_INV_STOCK_HEAD = _INV_STOCK_FIXED + "\n" + _d('''
    // LowStock lists the items at or below threshold, sorted by SKU.
    func (s *Stock) LowStock(threshold int) []Item {
    \tvar out []Item
    \tfor _, it := range s.Items() {
    \t\tif it.Quantity < threshold {
    \t\t\tout = append(out, it)
    \t\t}
    \t}
    \treturn out
    }
''')

_INV_STOCK_TEST_0 = _d('''
    package inventory

    import (
    \t"errors"
    \t"testing"

    \t"github.com/google/go-cmp/cmp"
    )

    func TestAddAndItems(t *testing.T) {
    \ts := New()
    \ts.Add("b-200", 3)
    \ts.Add("a-100", 5)
    \ts.Add("b-200", 2)
    \twant := []Item{{"a-100", 5}, {"b-200", 5}}
    \tif diff := cmp.Diff(want, s.Items()); diff != "" {
    \t\tt.Errorf("Items() mismatch (-want +got):\\n%s", diff)
    \t}
    }

    func TestRemove(t *testing.T) {
    \ts := New()
    \ts.Add("a-100", 5)
    \tif err := s.Remove("a-100", 2); err != nil {
    \t\tt.Fatal(err)
    \t}
    \tif diff := cmp.Diff([]Item{{"a-100", 3}}, s.Items()); diff != "" {
    \t\tt.Errorf("Items() mismatch (-want +got):\\n%s", diff)
    \t}
    }

    func TestRemoveUnknown(t *testing.T) {
    \tif err := New().Remove("nope", 1); !errors.Is(err, ErrUnknownSKU) {
    \t\tt.Errorf("err = %v, want ErrUnknownSKU", err)
    \t}
    }
''')

_INV_STOCK_TEST_FIX = _INV_STOCK_TEST_0 + "\n" + _d('''
    func TestRemoveMoreThanAvailable(t *testing.T) {
    \ts := New()
    \ts.Add("a-100", 2)
    \tif err := s.Remove("a-100", 3); err == nil {
    \t\tt.Error("removed 3 of 2 without an error")
    \t}
    \tif diff := cmp.Diff([]Item{{"a-100", 2}}, s.Items()); diff != "" {
    \t\tt.Errorf("a failed Remove changed the stock (-want +got):\\n%s", diff)
    \t}
    }
''')

_INV_STOCK_TEST_HEAD = _INV_STOCK_TEST_FIX + "\n" + _d('''
    func TestLowStock(t *testing.T) {
    \ts := New()
    \ts.Add("a-100", 1)
    \ts.Add("b-200", 50)
    \tif diff := cmp.Diff([]Item{{"a-100", 1}}, s.LowStock(10)); diff != "" {
    \t\tt.Errorf("LowStock mismatch (-want +got):\\n%s", diff)
    \t}
    }

    func TestLowStockIncludesThreshold(t *testing.T) {
    \t// known bug (#12): "at or below" is implemented as "below"
    \ts := New()
    \ts.Add("a-100", 10)
    \tif diff := cmp.Diff([]Item{{"a-100", 10}}, s.LowStock(10)); diff != "" {
    \t\tt.Errorf("LowStock mismatch (-want +got):\\n%s", diff)
    \t}
    }
''')

_INV_REPORT_0 = _d('''
    // Package report renders a stock listing as text.
    package report

    import (
    \t"fmt"
    \t"strings"

    \t"example.com/inventory"
    )

    // Text renders one "SKU quantity" line per item, then a TOTAL line.
    func Text(items []inventory.Item) string {
    \tvar b strings.Builder
    \ttotal := 0
    \tfor _, it := range items {
    \t\tfmt.Fprintf(&b, "%-10s %5d\\n", it.SKU, it.Quantity)
    \t\ttotal += it.Quantity
    \t}
    \tfmt.Fprintf(&b, "%-10s %5d\\n", "TOTAL", total)
    \treturn b.String()
    }
''')

_INV_REPORT_3 = _sub(
    _INV_REPORT_0,
    "\tvar b strings.Builder\n",
    "\tif len(items) == 0 {\n"
    '\t\treturn fmt.Sprintf("%-10s %5d\\n", "TOTAL", 0)\n'
    "\t}\n"
    "\tvar b strings.Builder\n",
)

_INV_REPORT_TEST_0 = _d('''
    package report

    import (
    \t"strings"
    \t"testing"

    \t"example.com/inventory"
    \t"github.com/google/go-cmp/cmp"
    )

    func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\\n"), "\\n") }

    func TestTextListsItems(t *testing.T) {
    \tgot := lines(Text([]inventory.Item{{SKU: "a-100", Quantity: 5}, {SKU: "b-200", Quantity: 7}}))
    \twant := []string{"a-100          5", "b-200          7", "TOTAL         12"}
    \tif diff := cmp.Diff(want, got); diff != "" {
    \t\tt.Errorf("Text mismatch (-want +got):\\n%s", diff)
    \t}
    }
''')

_INV_REPORT_TEST_1 = _INV_REPORT_TEST_0 + "\n" + _d('''
    func TestTextKeepsOrder(t *testing.T) {
    \tgot := lines(Text([]inventory.Item{{SKU: "z", Quantity: 1}, {SKU: "a", Quantity: 2}}))
    \tif got[0][:1] != "z" || got[1][:1] != "a" {
    \t\tt.Errorf("Text reordered the items: %q", got)
    \t}
    }
''')

_INV_REPORT_TEST_3 = _INV_REPORT_TEST_1 + "\n" + _d('''
    func TestTextEmpty(t *testing.T) {
    \tif diff := cmp.Diff([]string{"TOTAL          0"}, lines(Text(nil))); diff != "" {
    \t\tt.Errorf("Text(nil) mismatch (-want +got):\\n%s", diff)
    \t}
    }
''')

_INV_REPORT_TEST_HEAD = _INV_REPORT_TEST_3 + "\n" + _d('''
    func TestTextCSV(t *testing.T) {
    \tt.Skip("CSV output is not implemented yet (#13)")
    }
''')


@sample
def sample_go_inventory() -> SampleRepo:
    return SampleRepo(
        name="go-inventory",
        language=Language.GO,
        build_system="go-modules",
        test_framework="gotest",
        description="a Go module of two packages (one internal) testing with go-cmp from "
                    "the Go module proxy, pinned by go.sum",
        needs_network=True,
        commits=(
            Commit("Initial stock and text report", {
                "go.mod": _INV_GO_MOD,
                "go.sum": _INV_GO_SUM,
                "README.md": "# inventory\n\nStock levels per SKU and a text report.\n",
                "stock.go": _INV_STOCK_0,
                "stock_test.go": _INV_STOCK_TEST_0,
                "internal/report/report.go": _INV_REPORT_0,
                "internal/report/report_test.go": _INV_REPORT_TEST_0,
            }, date="2021-06-07T08:00:00+00:00", tag="v0.1.0"),
            Commit("Test that the report keeps the item order",
                   {"internal/report/report_test.go": _INV_REPORT_TEST_1},
                   date="2022-03-15T11:25:00+00:00"),
            Commit("Fix Remove allowing negative stock (#8)\n\nFixes #7", {
                "stock.go": _INV_STOCK_FIXED,
                "stock_test.go": _INV_STOCK_TEST_FIX,
            }, date="2022-10-04T16:45:00+00:00"),
            Commit("Fix report totals for empty stock (#10)\n\nFixes #9", {
                "internal/report/report.go": _INV_REPORT_3,
                "internal/report/report_test.go": _INV_REPORT_TEST_3,
            }, date="2023-07-12T13:00:00+00:00"),
            Commit("Add low-stock listing", {
                "stock.go": _INV_STOCK_HEAD,
                "stock_test.go": _INV_STOCK_TEST_HEAD,
                "internal/report/report_test.go": _INV_REPORT_TEST_HEAD,
            }, date="2024-02-28T10:10:00+00:00", tag="v0.2.0"),
        ),
        expected={
            "TestAddAndItems": P,
            "TestRemove": P,
            "TestRemoveUnknown": P,
            "TestRemoveMoreThanAvailable": P,
            "TestLowStock": P,
            "TestLowStockIncludesThreshold": F,
            "TestTextListsItems": P,
            "TestTextKeepsOrder": P,
            "TestTextEmpty": P,
            "TestTextCSV": S,
        },
        planted=(
            Planted(commit=1, kind=TaskKind.OTHER, decoy="tests_only"),
            Planted(
                commit=2, issues=(7,),
                fail_to_pass=("TestRemoveMoreThanAvailable",),
                pass_to_pass=("TestAddAndItems", "TestRemove", "TestRemoveUnknown",
                              "TestTextListsItems", "TestTextKeepsOrder"),
            ),
            Planted(commit=3, issues=(9,), decoy="no_fail_to_pass"),
        ),
        issues=(
            Issue(7, "Remove lets stock go negative",
                  "`Remove(\"a\", 3)` with 2 in stock succeeds and leaves -1.",
                  ("It should refuse and leave the stock as it was.",),
                  created_at="2022-09-28T10:00:00+00:00"),
            Issue(9, "Report of an empty stock",
                  "What does `report.Text(nil)` print? I expected a TOTAL line of 0.",
                  ("It does print one; adding a test and making it explicit.",),
                  created_at="2023-07-01T09:00:00+00:00"),
        ),
    )
