//! The fault-injection decorator's scheduled faults: the Nth write or flush fails, a torn write
//! leaves a prefix, bit flips on reads, and a power cut drops what was not flushed.

use shingled_zoned::{
    Dialect, FaultPlan, Faulty, MemZoned, ReportOption, Survivors, ZoneCond, ZoneOp, ZonedConfig, ZonedDevice,
};

fn dev(plan: FaultPlan) -> Faulty<MemZoned> {
    let mut c = ZonedConfig::small(4, 64, Dialect::Zbc);
    c.nr_conv = 1;
    Faulty::new(MemZoned::new(&c).unwrap(), plan).unwrap()
}

#[test]
fn nth_write_and_flush_fail_without_effect() {
    let mut d = dev(FaultPlan { fail_write: Some(2), fail_flush: Some(1), ..FaultPlan::default() });
    let z = d.report_zone(1).unwrap().start;
    d.write(z, &[1; 512]).unwrap();
    let e = d.write(z + 1, &[2; 512]).unwrap_err();
    assert_eq!(e.errno_name(), "EIO");
    assert!(e.to_string().contains("write #2"), "{e}");
    assert_eq!(d.report_zone(1).unwrap().wp, z + 1, "the failed write reached nothing");
    d.write(z + 1, &[3; 512]).unwrap();
    assert!(d.flush().is_err());
    // the failed flush made nothing durable: a power cut goes back to the empty device
    d.power_cut(Survivors::None).unwrap();
    assert_eq!(d.report_zone(1).unwrap().cond, ZoneCond::Empty);
}

#[test]
fn torn_write_keeps_a_prefix_and_fails() {
    let mut d = dev(FaultPlan { tear_write: Some((1, 3)), ..FaultPlan::default() });
    let z = d.report_zone(2).unwrap().start;
    let e = d.write(z, &[7; 8 * 512]).unwrap_err();
    assert!(e.to_string().contains("torn after 3 sectors"), "{e}");
    assert_eq!(d.report_zone(2).unwrap().wp, z + 3);
}

#[test]
fn every_nth_read_flips_one_bit() {
    let mut d = dev(FaultPlan { flip_read_every: Some(2), seed: 9, ..FaultPlan::default() });
    let z = d.report_zone(1).unwrap().start;
    d.write(z, &[0; 4096]).unwrap();
    let mut a = [0u8; 4096];
    d.read(z, &mut a).unwrap();
    assert!(a.iter().all(|&b| b == 0));
    d.read(z, &mut a).unwrap();
    assert_eq!(a.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
}

#[test]
fn power_cut_drops_unflushed_writes_and_undoes_conventional_overwrites() {
    let mut d = dev(FaultPlan::default());
    d.write(0, &[1; 1024]).unwrap();
    let z1 = d.report_zone(1).unwrap().start;
    d.write(z1, &[1; 1024]).unwrap();
    d.flush().unwrap();
    d.write(0, &[2; 512]).unwrap();
    d.write(z1 + 2, &[2; 1024]).unwrap();
    let z2 = d.report_zone(2).unwrap().start;
    d.zone_mgmt(ZoneOp::Open, z2, 128).unwrap();
    d.write(z2, &[3; 512]).unwrap();
    d.zone_mgmt(ZoneOp::Finish, z2, 128).unwrap(); // durable for zone 2
    d.power_cut(Survivors::None).unwrap();
    let zones = d.report_zones(0, 0, ReportOption::All).unwrap();
    assert_eq!((zones[1].cond, zones[1].wp), (ZoneCond::Closed, z1 + 2));
    assert_eq!(zones[2].cond, ZoneCond::Full);
    let mut b = [0u8; 1024];
    d.read(0, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 1), "the conventional overwrite was undone");
    d.read(z2, &mut b[..512]).unwrap();
    assert!(b[..512].iter().all(|&x| x == 3), "finish made zone 2's data durable");
}
