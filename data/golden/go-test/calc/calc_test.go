package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestAddWrong(t *testing.T) {
	if got := Add(2, 2); got != 5 {
		t.Errorf("Add(2, 2) = %d, want 5", got)
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("not today")
}

func TestTable(t *testing.T) {
	cases := []struct {
		name    string
		a, b, w int
	}{
		{"one plus two", 1, 2, 3},
		{"ünïcode", 1, 1, 2},
		{"[bracket]", 2, 2, 5},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.w {
				t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.w)
			}
		})
	}
}

func TestNested(t *testing.T) {
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
	})
	t.Run("skip me", func(t *testing.T) { t.Skip("later") })
}
