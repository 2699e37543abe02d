//! The atlas: one self-contained static HTML page of every graph view, map, loop and record.
