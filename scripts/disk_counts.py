"""Device I/Os a transaction, as the disk and a throttled cgroup count them,
for `scripts/pgbench-compare`'s three sides.

* real PostgreSQL and `pgiosim run`: `/proc/diskstats` of the disk under
  test around the run (requests completed after the block layer's merging:
  reads, writes, writes merged into another request, flushes), and the
  cgroup's own `blkio.throttle.io_serviced` (the bios blk-throttle counted
  for that cgroup: what its caps charged);
* `pgiosim model`: its own counts from its JSON (`io.device_ios`, the I/Os
  its caps counted after its block-layer stage), put in diskstats' terms.

The disk's counters hold every tenant's I/O and the kernel flusher's
writeback, which cgroup v1 charges to no cgroup; io_serviced holds only what
the cgroup's own tasks submitted (reads, WAL writes and fdatasyncs, the
checkpointer's sync_file_range and fsync). Both are kept, neither is fitted.
"""

from pgiosim_scripts import read

# Fields of a /proc/diskstats line after major, minor and name
# (Documentation/admin-guide/iostats.rst): reads completed, reads merged,
# writes completed, writes merged, flushes completed (kernel 5.5 and later).
FIELDS = {"reads": 3, "reads_merged": 4, "writes": 7, "writes_merged": 8, "flushes": 18}

# The issue-47 target for device I/Os a transaction (reads, and writes after
# merging): within 15% of real PostgreSQL's.
TARGET = 0.15


def diskstats(devname, text=None):
    """The disk's counters now: {field: count} (a field the kernel does not
    have is absent); {} when the disk is not listed."""
    for line in (text if text is not None else read("/proc/diskstats", "")).splitlines():
        p = line.split()
        if len(p) > 10 and p[2] == devname:
            return {k: int(p[i]) for k, i in FIELDS.items() if i < len(p)}
    return {}


def delta(before, after):
    return {k: after[k] - before.get(k, 0) for k in after if k in before}


def measured_per_tx(disk, cgroup, tx):
    """Per transaction, from a run's diskstats delta `disk` and its cgroup's
    counter delta `cgroup` (Group.counters' io_read_ios, io_write_ios)."""
    if not tx:
        return None
    out = {f"{k}_per_tx": v / tx for k, v in disk.items()}
    out["source"] = "/proc/diskstats"
    if cgroup and ("io_read_ios" in cgroup or "io_write_ios" in cgroup):
        out["io_serviced"] = {"reads_per_tx": cgroup.get("io_read_ios", 0) / tx,
                              "writes_per_tx": cgroup.get("io_write_ios", 0) / tx}
    return out


def model_per_tx(res):
    """The model's I/Os a transaction in diskstats' terms, from its result
    JSON. Its caps count what the block layer leaves (io.device_ios), a
    flush among the writes where the profile says the caps charge one
    (caps.flush_counts_as_io): that count is the io_serviced column.
    diskstats counts an fdatasync twice, once in flushes (the flush
    request sent to the disk) and once in writes (the empty pre-flush write
    bio, ended when the flush is: blk-flush.c), as blk-throttle charges it
    once: so its writes are the data and WAL writes plus one a flush (a WAL
    fdatasync, a data-file fsync), whatever the profile charges. Measured
    on this VM (docs/validation.md, 2026-12-07): 2,000 fdatasyncs with
    nothing dirty on an ext4 loop device counted 2,000 writes of 0 sectors
    and 2,000 flushes; real PostgreSQL's diskstats writes equal its
    cgroup's io_serviced writes and its WAL writes + pages written +
    fdatasyncs. Merged writes: the data and WAL writes asked for less those
    the disk got. None without device counts."""
    io = res.get("io") or {}
    dev = io.get("device_ios")
    tx = (res.get("summary") or {}).get("transactions") or 0
    if not dev or not tx:
        return None
    caps = (((res.get("run") or {}).get("device") or {}).get("caps") or {})
    flushes = io.get("wal_fdatasyncs", 0) + io.get("data_fsyncs", 0)
    data_wal = max(0.0, dev["writes"] - (flushes if caps.get("flush_counts_as_io") else 0))
    reads = dev["reads"]
    # The disk's own count, where the model gives it: the caps' leaves out
    # what passes them (the kernel's writeback past a cgroup v1 throttle),
    # which the disk still gets and diskstats counts.
    if "disk_writes_per_tx" in dev:
        data_wal, reads = dev["disk_writes_per_tx"] * tx, dev["disk_reads_per_tx"] * tx
    asked = io.get("data_writes", 0) + io.get("wal_writes", 0)
    return {"reads_per_tx": reads / tx, "writes_per_tx": (data_wal + flushes) / tx,
            "writes_merged_per_tx": max(0.0, asked - data_wal) / tx, "flushes_per_tx": flushes / tx,
            "io_serviced": {"reads_per_tx": dev["reads"] / tx, "writes_per_tx": dev["writes"] / tx},
            "source": "model io.device_ios"}


def checks(cell, rel_check):
    """Device reads and writes a transaction of `run` and `model` against
    real PostgreSQL's (diskstats), within TARGET."""
    out = {}
    real = ((cell.get("real") or {}).get("derived") or {}).get("device_io")
    if not real:
        return out
    for side in ("run", "model"):
        got = ((cell.get(side) or {}).get("derived") or {}).get("device_io")
        if not got:
            continue
        for k in ("reads", "writes"):
            c = rel_check(got.get(f"{k}_per_tx"), real.get(f"{k}_per_tx"), TARGET)
            if c:
                out[f"{side}_device_{k}"] = c
    return out


COLUMNS = [("reads", "reads_per_tx"), ("writes", "writes_per_tx"), ("merged wr", "writes_merged_per_tx"),
           ("flushes", "flushes_per_tx")]


def render(cells, ok, table):
    """One row a cell: real / run / model device I/Os a transaction, then
    the cgroup's io_serviced reads and writes."""
    rows = []
    for c in cells:
        row = [c["scale"], c["clients"], c["condition"]]
        sides = [((c.get(s) or {}).get("derived") or {}).get("device_io") if ok(c.get(s)) else None
                 for s in ("real", "run", "model")]
        for _, key in COLUMNS:
            row.append(" / ".join(f"{d[key]:.2f}" if d and d.get(key) is not None else "n/a" for d in sides))
        for key in ("reads_per_tx", "writes_per_tx"):
            row.append(" / ".join(f"{d['io_serviced'][key]:.2f}" if d and d.get("io_serviced") else "n/a"
                                  for d in sides))
        rows.append(row)
    if not any(any(v != "n/a / n/a / n/a" for v in r[3:]) for r in rows):
        return ""
    head = ["scale", "clients", "cond"] + [f"{n}/tx" for n, _ in COLUMNS] + ["io_serviced rd/tx", "io_serviced wr/tx"]
    return ("device I/Os a transaction, real / run / model (/proc/diskstats of the disk; io_serviced: the "
            "throttled cgroup's blkio.throttle.io_serviced, the model's: what its caps counted)\n"
            + table(rows, head))
