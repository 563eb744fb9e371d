//! A calculator with every kind of test libtest knows.

/// Adds two numbers.
///
/// ```
/// assert_eq!(golden::add(2, 3), 5);
/// ```
///
/// ```should_panic
/// golden::divide(1, 0);
/// ```
///
/// ```no_run
/// loop { golden::add(1, 1); }
/// ```
///
/// ```compile_fail
/// let small: u8 = golden::add(1, 2);
/// ```
///
/// ```ignore
/// this is not Rust
/// ```
///
/// ```
/// assert_eq!(golden::add(2, 2), 5);
/// ```
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Divides, panicking on a zero divisor.
pub fn divide(a: i64, b: i64) -> i64 {
    if b == 0 {
        panic!("division by zero");
    }
    a / b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_numbers() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn add_is_wrong() {
        assert_eq!(add(2, 2), 5, "two and two");
    }

    #[test]
    #[should_panic(expected = "division by zero")]
    fn divides_by_zero() {
        divide(1, 0);
    }

    #[test]
    #[should_panic]
    fn does_not_panic() {
        divide(4, 2);
    }

    #[test]
    #[ignore]
    fn ignored_plain() {}

    #[test]
    #[ignore = "not today"]
    fn ignored_with_reason() {}

    #[test]
    fn prints_then_passes() {
        println!("some output");
    }

    #[test]
    fn prints_then_fails() {
        println!("about to fail");
        assert!(add(1, 1) == 3);
    }

    #[test]
    fn returns_err() -> Result<(), String> {
        Err("an error value".to_string())
    }

    mod nested {
        #[test]
        fn deep_module() {
            assert_eq!(crate::add(0, 0), 0);
        }
    }
}
