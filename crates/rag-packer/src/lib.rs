//! Token-budget context packing for ragctl: the step between "the retriever returned these
//! chunks" and "this is the context of the prompt".
//!
//! The packing pipeline (tenant check, dedup, budget fit, ordering, conflict detection) and the
//! Repacker land with the packer issue; the types it returns (`PackedContext`, `DropReason`,
//! `ConflictAnnotation`) already live in `rag-core`.
