//! Retrieval ruler: hit, recall, precision@k, MRR, nDCG@k over a suite (CONCEPTS.md "retrieval").
//!
//! Being written: see the issue for the rulers.
