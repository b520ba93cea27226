//! Amazon RDS's volume striping (`model --service rds`): RDS for PostgreSQL
//! puts a gp3 volume of 400 GiB or more on four EBS volumes, with a
//! baseline of 12,000 IOPS and 500 MiB/s, provisionable to 64,000 and
//! 4,000 (AWS, "Amazon RDS DB instance storage", CHAP_Storage.html; quoted
//! in `settings::managed`'s `rds-storage` source). Such a volume is
//! modelled as an md RAID0 of four gp3 volumes, each with a quarter of the
//! size, the IOPS and the throughput, through the block layer's RAID0
//! stage ([`super::raid0`]): a WAL write lands on one member, an fdatasync
//! flushes all four. RDS does not publish its stripe size; md's default,
//! 512 KiB, stands in for it.

/// Volumes of a striped RDS gp3 volume.
const MEMBERS: u64 = 4;
/// The size from which RDS stripes a gp3 volume (PostgreSQL).
const STRIPED_FROM_GIB: u64 = 400;
/// A striped volume's baseline, the least it can be provisioned with.
const STRIPED_BASELINE_IOPS: u64 = 12_000;
const STRIPED_BASELINE_MIBPS: u64 = 500;

/// The RAID0 device a `--device` argument stands for on RDS, with a
/// sentence saying so; None where RDS keeps one volume (not gp3, smaller
/// than 400 GiB, or no size given) or the argument is not a plain gp3 one.
pub fn striped(device: &str) -> Option<(String, String)> {
    let params = device.strip_prefix("gp3:")?;
    let mut size = None;
    let (mut iops, mut mibps) = (STRIPED_BASELINE_IOPS, STRIPED_BASELINE_MIBPS);
    for item in params.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=')?;
        let value: u64 = value.trim().parse().ok()?;
        // Keys as the volume types take them: any case.
        match key.trim().to_ascii_lowercase().as_str() {
            "size_gib" => size = Some(value),
            "iops" => iops = value.max(STRIPED_BASELINE_IOPS),
            "mibps" => mibps = value.max(STRIPED_BASELINE_MIBPS),
            _ => return None,
        }
    }
    let size = size.filter(|s| *s >= STRIPED_FROM_GIB)?;
    let member = format!(
        "gp3:size_gib={},iops={},mibps={}",
        size / MEMBERS,
        iops / MEMBERS,
        mibps / MEMBERS
    );
    let arg = format!("raid0:n={MEMBERS},chunk=512k,member={member}");
    let said = format!(
        "--device {device}: RDS stripes gp3 of {STRIPED_FROM_GIB} GiB and more over \
         {MEMBERS} volumes ({iops} IOPS, {mibps} MiB/s in all): modelled as {arg} (RDS's \
         stripe size is not published; md's 512k stands in)"
    );
    Some((arg, said))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_gp3_volume_is_four_quarter_volumes() {
        let (arg, said) = striped("gp3:size_gib=1000,iops=16000,mibps=500").unwrap();
        assert_eq!(
            arg,
            "raid0:n=4,chunk=512k,member=gp3:size_gib=250,iops=4000,mibps=125"
        );
        assert!(said.contains("16000 IOPS, 500 MiB/s in all"), "{said}");
        // Below the striped baseline, RDS provisions the baseline.
        let (arg, _) = striped("gp3:SIZE_GIB=400").unwrap();
        assert_eq!(
            arg,
            "raid0:n=4,chunk=512k,member=gp3:size_gib=100,iops=3000,mibps=125"
        );
    }

    #[test]
    fn one_volume_stays_one() {
        for d in [
            "gp3:size_gib=399",
            "gp3:iops=12000",
            "gp3",
            "io1:size_gib=1000,iops=20000",
            "gp3:size_gib=1000,throughput=9",
            "raid0:n=4,member=gp3",
        ] {
            assert_eq!(striped(d), None, "{d}");
        }
    }
}
