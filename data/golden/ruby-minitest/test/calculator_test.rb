require "minitest/autorun"
require_relative "../lib/calculator"

class CalculatorTest < Minitest::Test
  def test_adds_numbers
    assert_equal 5, Calculator.add(2, 3)
  end

  def test_add_is_wrong
    assert_equal 5, Calculator.add(2, 2)
  end

  def test_divides_by_zero
    assert_equal 0, Calculator.divide(1, 0) # ZeroDivisionError: an error
  end

  def test_skipped
    skip "not today"
  end

  [[1, 2, 3], [2, 2, 5]].each do |a, b, want|
    define_method("test_add_#{a}_#{b}_is_#{want}") do
      assert_equal want, Calculator.add(a, b)
    end
  end
end

describe "Calculator spec" do
  it "adds with spaces [bracket]" do
    _(Calculator.add(1, 1)).must_equal 2
  end

  it "ünïcode name" do
    _(Calculator.add(0, 0)).must_equal 0
  end
end
