def test_ünïcode_function_name():
    assert "ü".upper() == "Ü"
