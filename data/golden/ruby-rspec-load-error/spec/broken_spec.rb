require_relative "../lib/missing"

RSpec.describe "never loaded" do
  it "never runs" do
  end
end
