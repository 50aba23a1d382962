//! Pieces the pages share.

pub mod chart;
pub mod layout;
pub mod upcoming;
