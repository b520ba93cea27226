//! A profile in one line, as `pgiosim devices` lists it. Its own file
//! because the line quotes the model's QD1 read (a microbenchmark), and the
//! profile must not import the model that reads it.

use super::microbench::qd1_read_latency;
use super::profile::Profile;

/// One line for `pgiosim devices`: name, what the disk is, its caps, its
/// QD1 read latency and its flush latency.
pub fn line(p: &Profile) -> String {
    line_in(p, 15)
}

/// [`line`] with the name padded to `name_width`, so that a list of
/// profiles lines up. The read latency is the model's median of a QD1 read
/// of 8 KiB, PostgreSQL's page, whatever size the profile's figures were
/// measured at.
pub fn line_in(p: &Profile, name_width: usize) -> String {
    let flush_kind = if p.flush_to_media {
        "to media, serial"
    } else {
        "cheap, parallel"
    };
    let contention = if p.contention_us > 0.0 {
        format!(" | +{} per I/O in flight", fmt_us(p.contention_us))
    } else {
        String::new()
    };
    let inode = match p.inode_sync_tick_ms {
        Some(ms) => format!(" | an fdatasync writes the inode after a write in a new {ms} ms tick"),
        None => String::new(),
    };
    format!(
        "{:<name_width$} {} | caps: {} | QD1 8 KiB read {} | flush {} ({}){contention}{inode}",
        p.name,
        p.description,
        match p.raid0 {
            Some(r) if p.caps_text() != "none" => {
                format!("{} on each of {}", p.caps_text(), r.members)
            }
            _ => p.caps_text(),
        },
        fmt_us(qd1_read_latency(p, 1).1),
        fmt_us(p.flush.median_us),
        flush_kind
    )
}

fn fmt_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_profile_is_one_line_starting_with_its_name() {
        for p in &crate::device::profile::shipped() {
            let l = line(p);
            assert!(l.starts_with(&p.name) && !l.contains('\n'), "{l}");
        }
    }

    #[test]
    fn the_line_says_caps_and_latencies() {
        let p = Profile::shipped("gp3").unwrap();
        let l = line(&p);
        for part in [
            "gp3",
            "3,000 IOPS",
            "125 MiB/s",
            "QD1 8 KiB read 551 µs",
            "flush 190 µs",
        ] {
            assert!(l.contains(part), "{l:?} lacks {part:?}");
        }
        // A profile measured at 4 KiB is shown at PostgreSQL's 8 KiB page,
        // which the model reads a little slower.
        let nvme = Profile::shipped("nvme").unwrap();
        assert_eq!(nvme.latency_io_kib, 4);
        let l = line_in(&nvme, 20);
        assert!(l.starts_with("nvme                 Local"), "{l:?}");
        let shown: f64 = l
            .split("QD1 8 KiB read ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{l:?}"));
        assert!(
            shown > nvme.read.median_us,
            "{shown} µs vs {}",
            nvme.read.median_us
        );
    }
}
