//! Managed services' default parameter values, where they differ from
//! PostgreSQL's (`model --service`): the values a new server of the service
//! starts with when no parameter group or flag changes them. They are
//! applied before `--config` and `--set`, so the user's settings win.
//!
//! Every figure here carries its source ([`SOURCES`]: the page, and what it
//! says). A default the sources did not give stays out, and
//! [`Service::unsourced`] says which: PostgreSQL's own default then applies.
//! What a service does that pgiosim does not model (RDS's striped
//! volumes, a synchronous standby) is listed by
//! [`Service::not_modelled`], for the notice and the docs.
//!
//! Aurora is not offered: its storage is a distributed log service, not a
//! volume with checkpoints, and no device profile describes it.

use super::unit::{BLCKSZ_BYTES, GB};

/// A managed PostgreSQL service whose storage pgiosim can represent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Amazon RDS for PostgreSQL (gp3, io1, io2 volumes).
    Rds,
    /// Google Cloud SQL for PostgreSQL (pd-ssd, Hyperdisk).
    CloudSql,
    /// Azure Database for PostgreSQL flexible server (Premium SSD, v2).
    AzureFlexible,
}

/// The server a service's defaults are computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server {
    /// The instance's memory, bytes.
    pub ram_bytes: u64,
    /// Its vCPUs.
    pub vcpus: u32,
    /// Its data disk's size in GiB, where the device says it.
    pub disk_gib: Option<u64>,
}

/// One default: the setting, its value as postgresql.conf text (in the
/// setting's base unit, as the service documents it), and its source's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Default {
    pub name: &'static str,
    pub value: String,
    pub source: &'static str,
}

/// Where a figure comes from: a key, the page, and what the page says.
pub struct Source {
    pub key: &'static str,
    pub url: &'static str,
    pub says: &'static str,
}

/// The sources, quoted (a translation is marked as such).
pub const SOURCES: &[Source] = &[
    Source {
        key: "rds-memory",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/PostgreSQL.Tuning.concepts.memory.html",
        says: "The shared_buffers parameter determines how much memory the server dedicates to \
               caching data. The default value is set to {DBInstanceClassMemory/32768} bytes, \
               based on the available memory for the DB instance.",
    },
    Source {
        key: "rds-25pct",
        url: "https://repost.aws/ja/knowledge-center/rds-aurora-postgresql-shared-buffers",
        says: "(translated) For RDS DB instances, the default value in the DB parameter group \
               is set to 25% of total memory.",
    },
    Source {
        key: "rds-formula",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_ParamValuesRef.html",
        says: "DBInstanceClassMemory: Returns an integer for the number of bytes of memory \
               available to the database process. This number is internally calculated by \
               starting with the total amount of memory for the DB instance class. From this, \
               the calculation subtracts memory reserved for the operating system and the RDS \
               processes that manage the instance. Therefore, the number is always somewhat \
               lower than the memory figures shown in the instance class tables. (Translated \
               from the zh page:) Division operator: returns an integer quotient; decimals in \
               the quotient are not rounded but truncated.",
    },
    Source {
        key: "rds-autovacuum",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Appendix.PostgreSQL.CommonDBATasks.Autovacuum.html",
        says: "(translated from the zh page) Manual vacuum operations always use the \
               maintenance_work_mem setting, whose default is \
               GREATEST({DBInstanceClassMemory/63963136*1024}, 65536).",
    },
    Source {
        key: "rds-ssl",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/ssl-certificate-rotation-postgresql.html",
        says: "(translated from the zh page) By default, the rds.force_ssl parameter is set to 0 (off) for DB \
               instances using PostgreSQL versions before 15, and to 1 (on) for DB instances \
               using PostgreSQL 15 and later major versions. If rds.force_ssl is 1, clients \
               must connect using SSL/TLS.",
    },
    Source {
        key: "rds-ssl-default",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/PostgreSQL.Concepts.General.SSL.html",
        says: "By default, RDS for PostgreSQL uses and expects all clients to connect using \
               SSL/TLS, but you can also require it. [...] libpq-based clients (such as psql) \
               and JDBC clients default to prefer.",
    },
    Source {
        key: "cloudsql-ssl",
        url: "https://cloud.google.com/sql/docs/postgres/configure-ssl-instance",
        says: "Cloud SQL creates a server certificate (server-ca.pem) automatically when you \
               create your instance. [...] Allow both non-SSL/non-TLS and SSL/TLS connections. \
               [...] This is the default.",
    },
    Source {
        key: "azure-ssl",
        url: "https://learn.microsoft.com/azure/postgresql/flexible-server/how-to-connect-tls-ssl",
        says: "By default, secured connectivity between the client and the server is enforced. \
               If you want to disable TLS/SSL for connecting to Azure Database for PostgreSQL \
               flexible server, you can change the server parameter require_secure_transport \
               to OFF.",
    },
    Source {
        key: "rds-storage",
        url: "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html",
        says: "On gp3 storage volumes, Amazon RDS provides a baseline storage performance of \
               3000 IOPS and 125 MiB/s. ... when the storage size for gp3 volumes reaches a \
               certain threshold, the baseline storage performance increases. This is because \
               of volume striping, where the storage uses four volumes instead of one. ... For \
               striped volumes, Amazon RDS provides a baseline storage performance of 12,000 \
               IOPS and 500 MiB/s. [PostgreSQL: 20-399 GiB 3,000 IOPS/125 MiB/s; 400-65,536 GiB \
               12,000 IOPS/500 MiB/s, provisioned 12,000-64,000 IOPS, 500-4,000 MiB/s.] \
               Automatic striping: MariaDB, MySQL, and PostgreSQL, less than 400 GiB: 1 volume; \
               400-65,536 GiB: 4.",
    },
    Source {
        key: "cloudsql-memory",
        url: "https://cloud.google.com/sql/docs/postgres/manage-memory-usage-best-practices",
        says: "(translated from the ja page) The maximum value that can be allocated to this \
               area is specified by the shared_buffers flag, and the default is 33% of the \
               instance's memory.",
    },
    Source {
        key: "azure-shared-buffers",
        url: "https://learn.microsoft.com/azure/postgresql/flexible-server/server-parameters-table-resource-usage---memory \
              (MicrosoftDocs/azure-databases-docs, includes/server-parameters-azure-notes-shared-buffers.md)",
        says: "For virtual machines with up to 2 GiB of memory, the formula used to compute the \
               value of shared_buffers is memoryGib * 16384. For virtual machines with more \
               than 2 GiB, the formula used to compute the value of shared_buffers is \
               memoryGib * 32768.",
    },
    Source {
        key: "azure-wal-buffers",
        url: "https://learn.microsoft.com/azure/postgresql/flexible-server/server-parameters-table-write-ahead-log---settings \
              (includes/server-parameters-azure-notes-wal-buffers.md)",
        says: "In virtual machines with up to 4 vCores, the value computed for wal_buffers is \
               2048. In virtual machines with more than 4 vCores, the value computed for \
               wal_buffers is 16384.",
    },
    Source {
        key: "azure-checkpoints",
        url: "https://learn.microsoft.com/azure/postgresql/flexible-server/server-parameters-table-write-ahead-log---checkpoints \
              (includes/param-16-write-ahead-log-checkpoints.md)",
        says: "checkpoint_timeout ... Default value 600, Allowed values 30-86400.",
    },
    Source {
        key: "azure-max-wal-size",
        url: "https://learn.microsoft.com/azure/postgresql/flexible-server/server-parameters-table-write-ahead-log---checkpoints \
              (includes/server-parameters-azure-notes-max-wal-size.md)",
        says: "The value is computed based on the size of the disk chosen for the instance: \
               32 GiB 2048 MiB, 64 GiB 4096 MiB, 128 GiB 12288 MiB, 256 GiB 20480 MiB, 512 GiB \
               25600 MiB, 1 TiB 30720 MiB, 2 TiB 40960 MiB, 4 TiB 40960 MiB, 8 TiB 65536 MiB, \
               16 TiB 65536 MiB, 32 TiB 65536 MiB.",
    },
    Source {
        key: "azure-disk-sizes",
        url: "https://learn.microsoft.com/azure/virtual-machines/disks-types \
              (MicrosoftDocs/azure-docs, includes/disk-storage-premium-ssd-sizes.md)",
        says: "Disk size in GiB: P1 4, P2 8, P3 16, P4 32, P6 64, P10 128, P15 256, P20 512, \
               P30 1,024, P40 2,048, P50 4,096, P60 8,192, P70 16,384, P80 32,767.",
    },
];

/// The source of `key`.
pub fn source(key: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.key == key)
}

/// Azure flexible server's max_wal_size by disk size (GiB → MB), the
/// table of [`SOURCES`]' "azure-max-wal-size".
const AZURE_MAX_WAL_SIZE: &[(u64, u64)] = &[
    (32, 2048),
    (64, 4096),
    (128, 12288),
    (256, 20480),
    (512, 25600),
    (1024, 30720),
    (2048, 40960),
    (4096, 40960),
    (8192, 65536),
    (16384, 65536),
    (32768, 65536),
];

/// Premium SSD tiers' sizes in GiB ("azure-disk-sizes").
const AZURE_PREMIUM_SSD_GIB: &[(&str, u64)] = &[
    ("p1", 4),
    ("p2", 8),
    ("p3", 16),
    ("p4", 32),
    ("p6", 64),
    ("p10", 128),
    ("p15", 256),
    ("p20", 512),
    ("p30", 1024),
    ("p40", 2048),
    ("p50", 4096),
    ("p60", 8192),
    ("p70", 16384),
    ("p80", 32767),
];

impl Service {
    /// Every service, in the order the help lists them.
    pub const ALL: [Service; 3] = [Service::Rds, Service::CloudSql, Service::AzureFlexible];

    /// The name `--service` takes.
    pub fn name(self) -> &'static str {
        match self {
            Service::Rds => "rds",
            Service::CloudSql => "cloud-sql",
            Service::AzureFlexible => "azure-flexible",
        }
    }

    /// The service `name` names (case-insensitive), or why not, in one line.
    pub fn parse(name: &str) -> Result<Service, String> {
        let n = name.trim().to_ascii_lowercase();
        if let Some(s) = Service::ALL.iter().find(|s| s.name() == n) {
            return Ok(*s);
        }
        let names = Service::ALL.map(Service::name).join(", ");
        if n.contains("aurora") {
            return Err(format!(
                "--service {name}: Aurora's storage is a distributed log service, not a volume \
                 pgiosim models; services: {names}"
            ));
        }
        Err(format!(
            "--service {name}: not a service; services: {names}"
        ))
    }

    /// The volume types of `pgiosim model --device` the service runs on.
    pub fn volumes(self) -> &'static str {
        match self {
            Service::Rds => "gp3, io1, io2",
            Service::CloudSql => "pd-ssd, hyperdisk-balanced",
            Service::AzureFlexible => "azure-premium-ssd, azure-premium-v2",
        }
    }

    /// The service's defaults for `server`, each with its source.
    pub fn defaults(self, server: &Server) -> Vec<Default> {
        // Every service offers TLS, and libpq's default sslmode (prefer)
        // takes it: a client over the network talks TLS.
        let ssl = Default {
            name: "ssl",
            value: "on".into(),
            source: match self {
                Service::Rds => "rds-ssl-default",
                Service::CloudSql => "cloudsql-ssl",
                Service::AzureFlexible => "azure-ssl",
            },
        };
        let mut v = self.memory_defaults(server);
        v.push(ssl);
        v
    }

    fn memory_defaults(self, server: &Server) -> Vec<Default> {
        let d = |name, value: u64, source| Default {
            name,
            value: value.to_string(),
            source,
        };
        match self {
            Service::Rds => {
                // DBInstanceClassMemory is "somewhat lower" than the class's
                // memory by an amount AWS does not publish: the class's
                // memory stands for it, so these are upper bounds.
                let m = server.ram_bytes;
                vec![
                    // {DBInstanceClassMemory/32768} in 8 kB pages: a quarter.
                    d("shared_buffers", m / 32768, "rds-memory"),
                    // In kB; integer division first, as RDS evaluates it.
                    d(
                        "maintenance_work_mem",
                        (m / 63_963_136 * 1024).max(65536),
                        "rds-autovacuum",
                    ),
                ]
            }
            Service::CloudSql => vec![d(
                "shared_buffers",
                server.ram_bytes * 33 / 100 / BLCKSZ_BYTES,
                "cloudsql-memory",
            )],
            Service::AzureFlexible => {
                // memoryGib * 16384 (or 32768) pages: RAM / 65536 (or
                // 32768) in bytes' terms, so a fractional GiB is kept.
                let per_page = if server.ram_bytes <= 2 * GB {
                    65536
                } else {
                    32768
                };
                let mut v = vec![
                    d(
                        "shared_buffers",
                        server.ram_bytes / per_page,
                        "azure-shared-buffers",
                    ),
                    d(
                        "wal_buffers",
                        if server.vcpus <= 4 { 2048 } else { 16384 },
                        "azure-wal-buffers",
                    ),
                    d("checkpoint_timeout", 600, "azure-checkpoints"),
                ];
                if let Some(mb) = server.disk_gib.and_then(azure_max_wal_size_mb) {
                    v.push(d("max_wal_size", mb, "azure-max-wal-size"));
                }
                v
            }
        }
    }

    /// The defaults that differ from PostgreSQL's but that no source given
    /// here states for `server`, so PostgreSQL's stay: for the notice.
    pub fn unsourced(self, server: &Server) -> Option<&'static str> {
        match self {
            Service::Rds => Some(
                "max_wal_size, checkpoint_timeout and wal_buffers (no AWS page found states \
                 RDS's)",
            ),
            Service::CloudSql => Some(
                "max_wal_size, checkpoint_timeout and wal_buffers (no Google page found states \
                 Cloud SQL's)",
            ),
            Service::AzureFlexible => server
                .disk_gib
                .and_then(azure_max_wal_size_mb)
                .is_none()
                .then_some(
                    "max_wal_size, which follows the disk's size: give --device \
                     azure-premium-ssd:tier=pNN or azure-premium-v2:size_gib=N",
                ),
        }
    }

    /// What the service does that the model leaves out, in words.
    pub fn not_modelled(self) -> &'static [&'static str] {
        match self {
            Service::Rds => &[
                "RDS's striping of a volume of 400 GiB or more over 4 (baseline 12,000 IOPS and \
                 500 MiB/s, up to 64,000 and 4,000 MiB/s): one volume is modelled; \
                 --device gp3:iops=12000,mibps=500 gives the baseline's caps",
                "Multi-AZ's synchronous copy in another zone",
            ],
            Service::CloudSql => &["high availability's synchronous copy in another zone"],
            Service::AzureFlexible => &["zone-redundant high availability's synchronous standby"],
        }
    }
}

/// max_wal_size in MB for an Azure disk of `gib`: the row of the largest
/// listed size at most `gib`; none below the table's first, 32 GiB.
pub fn azure_max_wal_size_mb(gib: u64) -> Option<u64> {
    AZURE_MAX_WAL_SIZE
        .iter()
        .rev()
        .find(|(size, _)| *size <= gib)
        .map(|(_, mb)| *mb)
}

/// The data disk's size in GiB that a `--device` spec states, where it is
/// an Azure disk the service runs on: a Premium SSD tier (p30 when none is
/// given, as `--device azure-premium-ssd` models) or a Premium SSD v2 with
/// size_gib.
pub fn azure_disk_gib(device: &str) -> Option<u64> {
    let (kind, rest) = device.split_once(':').unwrap_or((device, ""));
    let value = |key: &str| {
        rest.split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(key))
            .map(|(_, v)| v.trim().to_ascii_lowercase())
    };
    match kind.trim().to_ascii_lowercase().as_str() {
        "azure-premium-ssd" => {
            let tier = value("tier").unwrap_or_else(|| "p30".to_string());
            AZURE_PREMIUM_SSD_GIB
                .iter()
                .find(|(t, _)| *t == tier)
                .map(|(_, g)| *g)
        }
        "azure-premium-v2" => value("size_gib")?.parse::<f64>().ok().map(|g| g as u64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn server(gib: u64, vcpus: u32, disk_gib: Option<u64>) -> Server {
        Server {
            ram_bytes: gib * GIB,
            vcpus,
            disk_gib,
        }
    }

    fn value(v: &[Default], name: &str) -> Option<u64> {
        v.iter()
            .find(|d| d.name == name)
            .map(|d| d.value.parse().unwrap())
    }

    #[test]
    fn every_default_has_a_quoted_source() {
        for s in Service::ALL {
            for d in s.defaults(&server(16, 8, Some(1024))) {
                let src = source(d.source).unwrap_or_else(|| panic!("{}: no source", d.name));
                assert!(src.url.starts_with("https://") && !src.says.is_empty());
            }
        }
        let mut keys: Vec<_> = SOURCES.iter().map(|s| s.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), SOURCES.len(), "source keys are unique");
    }

    #[test]
    fn every_service_offers_tls() {
        for s in Service::ALL {
            let v = s.defaults(&server(16, 4, None));
            let ssl = v.iter().find(|d| d.name == "ssl").expect("ssl");
            assert_eq!(ssl.value, "on", "{}", s.name());
        }
    }

    #[test]
    fn rds_shared_buffers_is_dbinstanceclassmemory_over_32768_pages() {
        // m6i.xlarge's 16 GiB: 524288 pages of 8 kB, 4 GiB, a quarter.
        let v = Service::Rds.defaults(&server(16, 4, None));
        assert_eq!(value(&v, "shared_buffers"), Some(524_288));
        assert_eq!(524_288 * BLCKSZ_BYTES, 4 * GIB);
        // GREATEST({DBInstanceClassMemory/63963136*1024}, 65536) kB:
        // 17179869184 / 63963136 = 268 (truncated), × 1024.
        assert_eq!(value(&v, "maintenance_work_mem"), Some(268 * 1024));
        // A small instance gets the floor of 64 MB.
        let small = Service::Rds.defaults(&server(2, 2, None));
        assert_eq!(value(&small, "maintenance_work_mem"), Some(65536));
    }

    #[test]
    fn cloud_sql_shared_buffers_is_a_third() {
        let v = Service::CloudSql.defaults(&server(16, 4, None));
        // 33% of 16 GiB, in whole 8 kB pages.
        assert_eq!(
            value(&v, "shared_buffers"),
            Some(16 * GIB * 33 / 100 / 8192)
        );
    }

    #[test]
    fn azure_follows_its_tables() {
        // The docs' table: 2 GiB 32768, 4 GiB 131072, 16 GiB 524288, 672 GiB 22020096.
        for (gib, pages) in [(2, 32768), (4, 131_072), (16, 524_288), (672, 22_020_096)] {
            let v = Service::AzureFlexible.defaults(&server(gib, 4, None));
            assert_eq!(value(&v, "shared_buffers"), Some(pages), "{gib} GiB");
        }
        let four = Service::AzureFlexible.defaults(&server(16, 4, None));
        let eight = Service::AzureFlexible.defaults(&server(32, 8, None));
        assert_eq!(value(&four, "wal_buffers"), Some(2048));
        assert_eq!(value(&eight, "wal_buffers"), Some(16384));
        assert_eq!(value(&four, "checkpoint_timeout"), Some(600));
        // No disk size: max_wal_size is left to PostgreSQL's.
        assert_eq!(value(&four, "max_wal_size"), None);
        let p30 =
            Service::AzureFlexible.defaults(&server(16, 4, azure_disk_gib("azure-premium-ssd")));
        assert_eq!(value(&p30, "max_wal_size"), Some(30720));
        assert!(
            Service::AzureFlexible
                .unsourced(&server(16, 4, Some(1024)))
                .is_none()
        );
        assert!(
            Service::AzureFlexible
                .unsourced(&server(16, 4, None))
                .is_some()
        );
    }

    #[test]
    fn azure_disk_sizes_and_max_wal_size() {
        assert_eq!(azure_disk_gib("azure-premium-ssd:tier=P40"), Some(2048));
        assert_eq!(azure_disk_gib("azure-premium-ssd:tier=p80"), Some(32767));
        assert_eq!(
            azure_disk_gib("azure-premium-v2:iops=6000,size_gib=300"),
            Some(300)
        );
        assert_eq!(azure_disk_gib("azure-premium-v2"), None);
        assert_eq!(azure_disk_gib("gp3"), None);
        assert_eq!(azure_max_wal_size_mb(32), Some(2048));
        assert_eq!(azure_max_wal_size_mb(300), Some(20480));
        assert_eq!(azure_max_wal_size_mb(32767), Some(65536));
        assert_eq!(azure_max_wal_size_mb(16), None);
    }

    #[test]
    fn names_parse_and_aurora_is_refused_with_a_reason() {
        for s in Service::ALL {
            assert_eq!(Service::parse(&s.name().to_uppercase()), Ok(s));
        }
        let e = Service::parse("aurora").unwrap_err();
        assert!(
            e.contains("Aurora") && e.contains("rds") && !e.contains('\n'),
            "{e}"
        );
        let e = Service::parse("rdss").unwrap_err();
        assert!(e.contains("not a service") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn defaults_are_values_the_settings_take() {
        for s in Service::ALL {
            let mut settings = super::super::Settings::default();
            for d in s.defaults(&server(64, 16, Some(512))) {
                settings.set(d.name, &d.value).unwrap();
            }
        }
    }
}
