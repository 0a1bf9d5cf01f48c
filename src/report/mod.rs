//! What arena shows of a store: tables as text, CSV or JSON ([`tables`], re-exported here as
//! `report::{Table, Cell, Format, render}`, the paths every command uses).

pub mod tables;

pub use self::tables::{Cell, Format, Table, render};
