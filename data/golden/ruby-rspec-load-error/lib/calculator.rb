module Calculator
  def self.add(a, b)
    a + b
  end

  def self.divide(a, b)
    a / b
  end
end
