//! Small numeric helpers shared by the probe and the benches.

/// Median of a non-empty slice (the mean of the middle two for even lengths); reorders it.
///
/// # Panics
/// If `v` is empty.
pub fn median_in_place(v: &mut [f64]) -> f64 {
    assert!(!v.is_empty(), "median of an empty slice");
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::median_in_place;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_in_place(&mut [7.0]), 7.0);
    }

    #[test]
    #[should_panic(expected = "median of an empty slice")]
    fn median_of_nothing_panics() {
        median_in_place(&mut []);
    }
}
