//! What arena shows of a store: tables as text, CSV or JSON ([`tables`], re-exported here as
//! `report::{Table, Cell, Format, render}`, the paths every command uses) and the self-contained
//! HTML report with its game viewer ([`html`]).

pub mod html;
pub mod tables;

pub use self::tables::{Cell, Format, Table, render};
