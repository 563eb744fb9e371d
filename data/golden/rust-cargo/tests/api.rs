#[test]
fn smoke() {
    assert_eq!(golden::add(1, 1), 2);
}

#[test]
fn ünïcode_name() {
    println!("printed by a test");
    assert_eq!(golden::divide(9, 3), 3);
}
