"""What the comparison scripts share: one place for each.

* the pgiosim binary to run (`pgiosim_binary`);
* waiting for a quiet host (`quiet_wait`: the CPU only; `wait_quiet`: CPU,
  the disk, a fast fdatasync and fast reads, with `fsync_probe` and
  `read_probe`);
* PostgreSQL: finding or installing it (`ensure_postgres`, which honours
  PGIOSIM_NO_INSTALL), its system user (`ensure_user`), a postgresql.conf
  value (`conf_value`), pgbench's report (`parse_pgbench`);
* commands as that user and inside cgroups (`run`, `wrap`), the cgroups
  themselves (`Cgroups`), the disk under a path (`disk_of`);
* undoing what a run set up, newest first, also on error and on a signal
  (`Cleanup`, `CLEANUP`);
* the errors every script reports the same way (`EnvError`: this machine
  cannot run it, exit 3; `StepError`: a step failed) and `log`.

The scripts import it from their own directory (Python puts a script's
directory first on its path): `import pgiosim_scripts`.
"""

import glob
import mmap
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

# The running script's name, for log lines.
PROG = os.path.basename(sys.argv[0]) or "pgiosim-script"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The unprivileged system user PostgreSQL runs as.
PG_USER = "pgiosim_pg"


class EnvError(Exception):
    """This machine cannot run the comparison (exit 3)."""


class StepError(Exception):
    """A step of one cell failed; the cell is recorded as failed."""


class Interrupted(BaseException):
    pass


def log(msg):
    print(f"[{PROG} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- cleanup


class Cleanup:
    """Undo actions, run newest first: at the end, on error and on Ctrl-C."""

    def __init__(self):
        self.actions = []
        self.next_id = 0

    def push(self, desc, fn):
        self.next_id += 1
        self.actions.append((self.next_id, desc, fn))
        return self.next_id

    def pop(self, token, run=True):
        for i, (tid, desc, fn) in enumerate(self.actions):
            if tid == token:
                del self.actions[i]
                if run:
                    self._run(desc, fn)
                return

    def run_all(self):
        while self.actions:
            _, desc, fn = self.actions.pop()
            self._run(desc, fn)

    @staticmethod
    def _run(desc, fn):
        try:
            fn()
        except Exception as e:  # keep cleaning up
            log(f"cleanup: {desc}: {e}")


CLEANUP = Cleanup()


# ---------------------------------------------------------------- processes


def wrap(cmd, user=None, procs=()):
    """The command line that runs cmd as user, inside the cgroups whose
    cgroup.procs files are listed (the shell joins them, then execs)."""
    cmd = [str(c) for c in cmd]
    if user:
        cmd = ["runuser", "-u", user, "--"] + cmd
    if procs:
        files = " ".join(shlex.quote(p) for p in procs)
        cmd = ["sh", "-c", f'echo $$ | tee {files} >/dev/null && exec "$@"', "sh"] + cmd
    return cmd


def run(cmd, user=None, procs=(), check=True, timeout=900, cwd=None):
    full = wrap(cmd, user, procs)
    try:
        p = subprocess.run(
            full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise StepError(f"{' '.join(map(str, cmd))}: timed out after {timeout} s")
    if check and p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-5:]
        raise StepError(f"{' '.join(map(str, cmd))} failed (exit {p.returncode}): " + " | ".join(tail))
    return p


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


# ---------------------------------------------------------------- host figures


def cpu_jiffies():
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    f = [int(x) for x in read("/proc/stat").splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (f + [0] * 8)[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


def disk_ios(devname):
    for line in read("/proc/diskstats", "").splitlines():
        p = line.split()
        if len(p) > 7 and p[2] == devname:
            return int(p[3]) + int(p[7])
    return 0


HZ = os.sysconf("SC_CLK_TCK")


def host_cpu_s():
    """CPU seconds used by every task on the host so far: the root cpuacct
    group (same clock as our groups' figures), else /proc/stat."""
    v = read("/sys/fs/cgroup/cpuacct/cpuacct.usage")
    if v and v.strip().isdigit():
        return int(v) / 1e9
    for line in read("/sys/fs/cgroup/cpu.stat", "").splitlines():
        if line.startswith("usage_usec"):
            return int(line.split()[1]) / 1e6
    return cpu_jiffies()[0] / HZ


SLOW_FSYNC_US = 300  # this disk, quiet: ~35 us (fio), ~90 us (pg_test_fsync)


def _timed(op, seconds):
    """Call op(i) for i = 0, 1, ... for `seconds` (at most 50,000 calls):
    the latencies' summary, or None if there were none."""
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(lat) < 50000:
        t = time.perf_counter()
        op(len(lat))
        lat.append(time.perf_counter() - t)
    if not lat:
        return None
    lat.sort()
    return {"ops": len(lat), "p50_us": lat[len(lat) // 2] * 1e6, "p99_us": lat[int(len(lat) * 0.99)] * 1e6,
            "mean_us": sum(lat) / len(lat) * 1e6}


def fsync_probe(dirpath, seconds=0.5):
    """8 KiB write + fdatasync at queue depth 1 on a scratch file: what a
    commit costs on this disk right now (other tenants can slow it down
    without showing up in this kernel's figures)."""
    path = os.path.join(dirpath, ".pgbench-compare-fsync-probe")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    buf = os.urandom(8192)

    def commit(i):
        os.pwrite(fd, buf, 8192 * (i % 128))
        os.fdatasync(fd)

    try:
        return _timed(commit, seconds)
    finally:
        os.close(fd)
        os.unlink(path)


SLOW_READ_US = 1000  # this disk, quiet: ~80 us (fio, 8 KiB QD1 O_DIRECT); in its slow spells 4-5 ms


def read_probe(dirpath, seconds=0.5, size=16 << 20):
    """8 KiB O_DIRECT random reads at queue depth 1 from a scratch file: what a
    buffer-pool miss costs on this disk right now. This kind of VM's disk has
    spells in which reads take 4-5 ms while write+fdatasync stays fast
    (2026-12-07: fio QD1 reads at 207 IOPS, fdatasync at 110 us), so the
    fdatasync probe alone does not see them. None where the directory's file
    system has no O_DIRECT (tmpfs)."""
    path = os.path.join(dirpath, ".pgbench-compare-read-probe")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        # Real blocks: a hole would be answered with zeros without a read.
        chunk = os.urandom(1 << 20)
        for off in range(0, size, len(chunk)):
            os.pwrite(fd, chunk, off)
        os.fdatasync(fd)
        os.close(fd)
        fd = None
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, 8192)  # page-aligned, as O_DIRECT needs
        pages = size // 8192
        # A fixed stride over the file: no page twice in a row, no RNG.
        return _timed(lambda i: os.preadv(fd, [buf], (i * 7919 % pages) * 8192), seconds)
    except OSError:
        return None
    finally:
        if fd is not None:
            os.close(fd)
        os.unlink(path)


def wait_quiet(max_s, devname, probe_dir):
    """Wait until 3 consecutive seconds have < 8 % CPU busy and < 60 IOPS on
    the disk (the anchors' rule) and a short fdatasync probe is fast, at most
    max_s seconds. -> (quiet, waited_s)."""
    t0 = time.monotonic()
    streak = 0
    while time.monotonic() - t0 < max_s:
        b0, t0j = cpu_jiffies()
        d0 = disk_ios(devname)
        time.sleep(1.0)
        b1, t1j = cpu_jiffies()
        d1 = disk_ios(devname)
        busy = (b1 - b0) / max(1, t1j - t0j)
        streak = streak + 1 if busy < 0.08 and d1 - d0 < 60 else 0
        if streak >= 3:
            reads = read_probe(probe_dir, 0.2)
            if (fsync_probe(probe_dir, 0.2)["p50_us"] < SLOW_FSYNC_US
                    and (reads is None or reads["p50_us"] < SLOW_READ_US)):
                return True, time.monotonic() - t0
            streak = 0
    return False, time.monotonic() - t0


def cpu_busy(interval=1.0):
    """The share of all CPUs busy over `interval` seconds (/proc/stat)."""
    b0, t0 = cpu_jiffies()
    time.sleep(interval)
    b1, t1 = cpu_jiffies()
    return (b1 - b0) / max(1, t1 - t0)


def quiet_wait(limit):
    """Waits up to `limit` s for 2 seconds in a row with under 40 % of the
    CPUs busy; returns the last busy share (None when `limit` is 0). A host
    quiet enough for a measurement that does not hinge on the disk; see
    `wait_quiet` for one that does."""
    if limit <= 0:
        return None
    end = time.time() + limit
    quiet = 0
    busy = 1.0
    while time.time() < end:
        busy = cpu_busy()
        quiet = quiet + 1 if busy < 0.40 else 0
        if quiet >= 2:
            break
    return busy


# ---------------------------------------------------------------- cgroups


class Cgroups:
    """cgroup v1 (memory, blkio, cpuacct hierarchies) or v2 (memory.max,
    io.max). Detects what the kernel offers."""

    V1 = "/sys/fs/cgroup"

    def __init__(self):
        self.version = None
        self.memory = self.throttle = self.cpuacct = False
        v1 = self.V1
        if os.path.exists(f"{v1}/memory/cgroup.procs") or os.path.exists(f"{v1}/blkio/cgroup.procs"):
            self.version = 1
            self.memory = os.path.exists(f"{v1}/memory/memory.limit_in_bytes")
            self.throttle = os.path.exists(f"{v1}/blkio/blkio.throttle.read_iops_device")
            self.cpuacct = os.path.exists(f"{v1}/cpuacct/cpuacct.usage")
        elif os.path.exists(f"{v1}/cgroup.controllers"):
            self.version = 2
            ctrls = read(f"{v1}/cgroup.controllers", "").split()
            want = [c for c in ("memory", "io", "cpu") if c in ctrls]
            try:
                with open(f"{v1}/cgroup.subtree_control", "w") as f:
                    f.write(" ".join("+" + c for c in want))
            except OSError as e:
                log(f"cgroup v2: cannot enable {want} for child groups: {e}")
            sub = read(f"{v1}/cgroup.subtree_control", "").split()
            self.memory = "memory" in sub
            self.throttle = "io" in sub
            self.cpuacct = True  # cpu.stat usage_usec is always there

    def describe(self):
        return {"version": self.version, "memory": self.memory, "io_throttle": self.throttle, "cpu_accounting": self.cpuacct}

    def create(self, role, mem_bytes=None, caps=None, dev=None, blkio=True):
        """A group for `role`: memory limit, blkio `caps` ({"iops": N,
        "bps": N or None}) on disk `dev` (MAJ:MIN), CPU accounting."""
        self.serial = getattr(self, "serial", 0) + 1
        name = f"pgbench_compare_{os.getpid()}_{self.serial}_{role}"
        g = Group(self, name)
        try:
            if self.version == 1:
                if mem_bytes is not None and self.memory:
                    d = g.mkdir(f"{self.V1}/memory/{name}")
                    g.write(f"{d}/memory.limit_in_bytes", str(mem_bytes))
                    g.mem = d
                if blkio and os.path.exists(f"{self.V1}/blkio/cgroup.procs"):
                    d = g.mkdir(f"{self.V1}/blkio/{name}")
                    g.blkio = d
                    if caps:
                        for f, v in (("read_iops_device", caps["iops"]), ("write_iops_device", caps["iops"]),
                                     ("read_bps_device", caps.get("bps")), ("write_bps_device", caps.get("bps"))):
                            if v:
                                g.write(f"{d}/blkio.throttle.{f}", f"{dev} {v}")
                if self.cpuacct:
                    g.cpu = g.mkdir(f"{self.V1}/cpuacct/{name}")
            elif self.version == 2:
                d = g.mkdir(f"{self.V1}/{name}")
                g.mem = g.blkio = g.cpu = d
                if mem_bytes is not None and self.memory:
                    g.write(f"{d}/memory.max", str(mem_bytes))
                if caps:
                    bps = caps.get("bps") or "max"
                    g.write(f"{d}/io.max", f"{dev} riops={caps['iops']} wiops={caps['iops']} rbps={bps} wbps={bps}")
        except OSError as e:
            g.destroy()
            raise StepError(f"cannot set up cgroup {name}: {e}")
        g.token = CLEANUP.push(f"remove cgroup {name}", g.destroy)
        return g


class Group:
    def __init__(self, cgs, name):
        self.cgs, self.name = cgs, name
        self.dirs = []
        self.mem = self.blkio = self.cpu = None
        self.token = None

    def mkdir(self, d):
        os.mkdir(d)
        self.dirs.append(d)
        return d

    @staticmethod
    def write(path, value):
        with open(path, "w") as f:
            f.write(value + "\n")

    @property
    def procs(self):
        return [f"{d}/cgroup.procs" for d in self.dirs]

    def pids(self):
        if not self.dirs:
            return []
        return [int(x) for x in read(f"{self.dirs[0]}/cgroup.procs", "").split()]

    def counters(self, dev):
        c = {}
        if self.cgs.version == 1:
            if self.cpu:
                c["cpu_ns"] = int(read(f"{self.cpu}/cpuacct.usage", "0"))
            if self.mem:
                c["mem_max_bytes"] = int(read(f"{self.mem}/memory.max_usage_in_bytes", "0"))
                c["mem_failcnt"] = int(read(f"{self.mem}/memory.failcnt", "0"))
                stat = dict(l.split() for l in read(f"{self.mem}/memory.stat", "").splitlines() if l.count(" ") == 1)
                for k in ("cache", "rss", "shmem", "dirty", "writeback"):
                    if k in stat:
                        c[f"mem_{k}_bytes"] = int(stat[k])
            if self.blkio:
                for fname, unit in (("blkio.throttle.io_serviced", "ios"), ("blkio.throttle.io_service_bytes", "bytes")):
                    for line in read(f"{self.blkio}/{fname}", "").splitlines():
                        p = line.split()
                        if len(p) == 3 and p[0] == dev and p[1] in ("Read", "Write"):
                            c[f"io_{p[1].lower()}_{unit}"] = int(p[2])
        elif self.cgs.version == 2 and self.dirs:
            d = self.dirs[0]
            for line in read(f"{d}/cpu.stat", "").splitlines():
                if line.startswith("usage_usec"):
                    c["cpu_ns"] = int(line.split()[1]) * 1000
            if os.path.exists(f"{d}/memory.peak"):
                c["mem_max_bytes"] = int(read(f"{d}/memory.peak", "0"))
            # memory.events' "max": how often usage reached memory.max, as
            # v1's failcnt counts.
            for line in read(f"{d}/memory.events", "").splitlines():
                if line.startswith("max "):
                    c["mem_failcnt"] = int(line.split()[1])
            for line in read(f"{d}/io.stat", "").splitlines():
                p = line.split()
                if p and p[0] == dev:
                    kv = dict(x.split("=") for x in p[1:])
                    c.update(io_read_ios=int(kv.get("rios", 0)), io_write_ios=int(kv.get("wios", 0)),
                             io_read_bytes=int(kv.get("rbytes", 0)), io_write_bytes=int(kv.get("wbytes", 0)))
        return c

    def uncap(self, dev):
        """Lift the group's blkio caps on `dev` (cgroup v1: a limit of 0 is
        none; v2: max)."""
        if self.cgs.version == 1 and self.blkio:
            for f in ("read_iops_device", "write_iops_device", "read_bps_device", "write_bps_device"):
                path = f"{self.blkio}/blkio.throttle.{f}"
                if dev in read(path, ""):
                    self.write(path, f"{dev} 0")
        elif self.cgs.version == 2 and self.dirs:
            self.write(f"{self.dirs[0]}/io.max", f"{dev} riops=max wiops=max rbps=max wbps=max")

    def destroy(self):
        """rmdir the groups once their processes are gone (ours, all of
        them); stragglers after 15 s are killed by pid."""
        deadline = time.monotonic() + 15
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in self.pids():
            log(f"cgroup {self.name}: killing leftover process {pid}")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for d in reversed(self.dirs):
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                log(f"cannot remove cgroup {d}")
        self.dirs = []

    def remove(self):
        CLEANUP.pop(self.token)


# ---------------------------------------------------------------- PostgreSQL


def find_pg_bindir():
    for d in ["/usr/lib/postgresql/15/bin"] + sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all(os.access(f"{d}/{b}", os.X_OK) for b in ("pg_ctl", "initdb", "postgres", "pgbench", "psql")):
            return d
    return None


def ensure_postgres():
    d = find_pg_bindir()
    if d:
        return d
    if os.environ.get("PGIOSIM_NO_INSTALL"):
        raise EnvError("PostgreSQL is not installed (PGIOSIM_NO_INSTALL is set: the tests never "
                       "install; .ci/run does)")
    if not shutil.which("apt-get"):
        raise EnvError("PostgreSQL is not installed and there is no apt-get to install it")
    log("installing PostgreSQL: apt-get install -y postgresql")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    ok = subprocess.run(["apt-get", "install", "-y", "postgresql"], env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if not ok:
        subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ok = subprocess.run(["apt-get", "install", "-y", "postgresql"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode == 0
    d = find_pg_bindir()
    if not ok or not d:
        raise EnvError("cannot install PostgreSQL (apt-get install -y postgresql failed)")
    return d


def ensure_user():
    try:
        pwd.getpwnam(PG_USER)
        return
    except KeyError:
        pass
    log(f"creating system user {PG_USER}")
    p = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", PG_USER],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise EnvError(f"cannot create system user {PG_USER}: {p.stderr.strip()}")


def conf_value(v):
    return "'" + v.replace("\\", "\\\\").replace("'", "''") + "'"


# ---------------------------------------------------------------- pgbench output


def parse_pgbench(stdout, stderr, duration):
    r = {}
    pats = {
        "transactions": r"number of transactions actually processed: (\d+)",
        "failed": r"number of failed transactions: (\d+)",
        "latency_ms": r"latency average = ([\d.]+) ms",
        "latency_stddev_ms": r"latency stddev = ([\d.]+) ms",
        "tps": r"tps = ([\d.]+) \(without initial connection time\)",
    }
    for k, p in pats.items():
        m = re.search(p, stdout)
        if m:
            r[k] = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    stmts = []
    if "statement latencies" in stdout:
        for line in stdout.split("statement latencies", 1)[1].splitlines()[1:]:
            m = re.match(r"^\s+([\d.]+)\s+(?:(\d+)\s+)?(\S.*)$", line)
            if not m:
                break
            stmts.append({"command": m.group(3).strip(), "latency_ms": float(m.group(1))})
    r["statements"] = stmts
    prog = [(float(a), float(b)) for a, b in re.findall(r"progress: ([\d.]+) s, ([\d.]+) tps", stderr)]
    r["progress"] = prog
    second = [tps for t, tps in prog if t > duration / 2]
    r["tps_second_half"] = sum(second) / len(second) if second else None
    return r


# ---------------------------------------------------------------- pgiosim and the disk


def pgiosim_binary():
    """The pgiosim binary the scripts run: $PGIOSIM if set (it must be an
    executable), else target/release/pgiosim of this checkout, built with
    cargo when it is missing. Raises EnvError."""
    p = os.environ.get("PGIOSIM")
    if p:
        if not (os.path.isfile(p) and os.access(p, os.X_OK)):
            raise EnvError(f"PGIOSIM={p} is not an executable")
        return os.path.abspath(p)
    p = os.path.join(REPO, "target", "release", "pgiosim")
    if not os.access(p, os.X_OK):
        log("building pgiosim: cargo build --release")
        if not shutil.which("cargo"):
            raise EnvError(f"{p} is missing and there is no cargo to build it (set PGIOSIM)")
        if subprocess.run(["cargo", "build", "--release"], cwd=REPO).returncode != 0 or not os.access(p, os.X_OK):
            raise EnvError("cargo build --release failed")
    return p


def disk_of(path):
    """MAJ:MIN of the whole disk under the filesystem holding path (blkio
    throttling works on disks, not partitions), and its kernel name."""
    src = run(["findmnt", "-n", "-o", "SOURCE", "--target", path], check=False).stdout.strip()
    if src.startswith("/dev/"):
        out = run(["lsblk", "-ndo", "MAJ:MIN,TYPE,PKNAME,KNAME", src], check=False).stdout.split()
        if len(out) >= 2:
            majmin, typ = out[0], out[1]
            kname = out[-1]
            if typ == "part" and len(out) >= 4:
                parent = out[2]
                pm = run(["lsblk", "-ndo", "MAJ:MIN", f"/dev/{parent}"], check=False).stdout.strip()
                if pm:
                    return pm, parent
            return majmin, kname
    # Fallback: the filesystem's device number through sysfs.
    st = os.stat(path)
    majmin = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sysd = os.path.realpath(f"/sys/dev/block/{majmin}")
    if os.path.exists(os.path.join(sysd, "partition")):
        sysd = os.path.dirname(sysd)
        majmin = read(os.path.join(sysd, "dev"), majmin).strip()
    if not os.path.exists(sysd):
        raise EnvError(f"cannot find the block device holding {path}")
    return majmin, os.path.basename(sysd)
