// The translation unit that builds a precompiled header (cmake/CourtpiecePch.cmake); it
// defines nothing.
