require_relative "../lib/calculator"

RSpec.describe Calculator do
  describe ".add" do
    it "adds two numbers" do
      expect(Calculator.add(2, 3)).to eq(5)
    end

    it "is wrong on purpose" do
      expect(Calculator.add(2, 2)).to eq(5)
    end

    [[1, 2, 3], [2, 2, 5]].each do |a, b, want|
      it "adds #{a} and #{b} to #{want}" do
        expect(Calculator.add(a, b)).to eq(want)
      end
    end
  end

  describe "#divide" do
    it "raises unexpectedly" do
      expect(Calculator.divide(1, 0)).to eq(0)
    end
  end

  it "is skipped", skip: "not today" do
    expect(true).to be(false)
  end

  xit "is pending via xit" do
    expect(true).to be(false)
  end

  it "ünïcode [bracket] name" do
    expect(Calculator.add(0, 0)).to eq(0)
  end

  context "with a context" do
    pending "fails as expected" do
      expect(Calculator.add(1, 1)).to eq(3)
    end
  end
end
