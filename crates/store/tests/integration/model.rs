//! Model-based tests (added in the next slice).
