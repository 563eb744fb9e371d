#[test]
fn smoke() {
    assert_eq!(golden::add(1, 1), 3);
}
