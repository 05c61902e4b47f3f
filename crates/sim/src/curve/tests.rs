use super::*;

#[test]
fn rates_and_units_parse_and_bad_ones_say_why() {
    assert_eq!("0.1".parse::<Rate>(), Ok(Rate::Fixed(0.1)));
    assert_eq!("5%".parse::<Rate>(), Ok(Rate::Fixed(0.05)));
    assert_eq!("auto".parse::<Rate>(), Ok(Rate::Auto));
    for bad in ["0", "-0.1", "1.5", "150%", "fast", "nan"] {
        assert!(bad.parse::<Rate>().is_err(), "{bad}");
    }
    assert_eq!("zone:20MiB".parse::<Unit>(), Ok(Unit::Zone(ByteSize::mib(20))));
    assert_eq!("band".parse::<Unit>(), Ok(Unit::Band));
    assert!("zone:1B".parse::<Unit>().unwrap_err().to_string().contains("4 KiB"));
    assert!("stripe".parse::<Unit>().unwrap_err().to_string().contains("band or zone"));
}

#[test]
fn spread_points_include_both_ends() {
    assert_eq!(spread(20, 3), vec![0, 10, 19]);
    assert_eq!(spread(5, 9), vec![0, 1, 2, 3, 4]);
    assert_eq!(spread(7, 1), vec![3]);
    assert!(spread(7, 0).is_empty());
}

#[test]
fn auto_rate_keeps_enough_units_and_cache() {
    // 40 000 bands touched: 400 of them is 1%; a 100 000-block cache needs 4096/100000.
    assert!((resolve_rate(Rate::Auto, 40_000, 1_000_000) - 0.01).abs() < 1e-12);
    assert!((resolve_rate(Rate::Auto, 40_000, 100_000) - 0.04096).abs() < 1e-12);
    assert_eq!(resolve_rate(Rate::Auto, 100, 1_000_000), 1.0);
    assert_eq!(resolve_rate(Rate::Auto, u64::MAX, u64::MAX), AUTO_MIN_RATE);
    assert_eq!(resolve_rate(Rate::Fixed(0.3), 1, 1), 0.3);
}

#[test]
fn sizes_print_as_written() {
    let l = |t: &str| size_label(&t.parse().unwrap());
    assert_eq!(
        [l("3.5%"), l("1%"), l("4%"), l("1/256"), l("0.25%"), l("1GiB")],
        ["3.5%", "1%", "4%", "1/256", "0.25%", "1GiB"]
    );
}

#[test]
fn scaling_rounds_and_never_reaches_zero() {
    assert_eq!(scaled(1000, 0.1), 100);
    assert_eq!(scaled(15, 0.1), 2);
    assert_eq!(scaled(3, 0.01), 1);
}

#[test]
fn the_scaled_fields_exist_in_the_policies_that_have_them() {
    // If a policy renames a period or cycle field, block-count lengths would silently stop
    // scaling: this fails first.
    for (policy, field) in [
        ("pore", "period"),
        ("sac", "cycle_length"),
        ("sac", "clean_scan"),
        ("sac", "clean_phase"),
        ("most-cdc:cycle_length=5000", "cycle_length"),
        ("most-cdc", "clean_scan"),
        ("most-cdc", "clean_phase"),
    ] {
        let p: PolicyConfig = policy.parse().unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert!(v.get(field).is_some(), "{policy} has no field {field}: {v}");
        assert!(SCALED_FIELDS.contains(&field));
    }
}

#[test]
fn a_scaled_configuration_scales_sizes_and_block_lengths_and_keeps_pb_relative_ones() {
    let full = SimConfig {
        cache: Some(crate::CacheConfig { policy: "pore:period=1000".parse().unwrap(), ..Default::default() }),
        warmup: Warmup::Requests(5000),
        ..Default::default()
    };
    let cell = Cell {
        policy: "pore".into(),
        cache_size: SizeSpec::Fraction(0.02),
        pb_size: Some(SizeSpec::Fraction(1.0 / 256.0)),
        full,
        cache_blocks: 12_345,
        pb_blocks: Some(2_001),
    };
    let cfg = scaled_config(&cell, Scale::uniform(0.1)).unwrap();
    let c = cfg.cache.unwrap();
    // 12 345 × 0.1 = 1234.5 → 1235 blocks; PB 2001 × 0.1 = 200.1 → 200; period 1000 → 100.
    assert_eq!(c.size, SizeSpec::Absolute(ByteSize(1235 * 4096)));
    assert_eq!(serde_json::to_value(&c.policy).unwrap()["period"], 100);
    let DriveConfig::DmSmr(d) = &cfg.drive else { panic!("a DM-SMR drive") };
    assert_eq!(d.pb_size, SizeSpec::Absolute(ByteSize(200 * 4096)));
    assert_eq!(cfg.warmup, Warmup::Requests(500));
    // SAC's default cycle is one PB: it stays relative and follows the scaled PB.
    let sac = Cell {
        full: SimConfig {
            cache: Some(crate::CacheConfig { policy: "sac".parse().unwrap(), ..Default::default() }),
            ..SimConfig::default()
        },
        ..cell
    };
    // Measured shares: the cache by 0.1, the PB by 0.2 (2001 → 400).
    let cfg = scaled_config(&sac, Scale { cache: 0.1, pb: 0.2, traffic: 0.3 }).unwrap();
    let DriveConfig::DmSmr(d) = &cfg.drive else { panic!("a DM-SMR drive") };
    assert_eq!(d.pb_size, SizeSpec::Absolute(ByteSize(400 * 4096)));
    let p = serde_json::to_value(&cfg.cache.unwrap().policy).unwrap();
    assert_eq!(p["cycle_length"], "1pb");
    assert_eq!(p["clean_scan"], 10_000);
}
