//! PostgreSQL settings (being written).
