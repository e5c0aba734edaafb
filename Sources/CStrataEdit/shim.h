// libedit (BSD licence) through its readline interface, for `strata shell`:
// line editing, history with Ctrl-R search, and tab completion. Setters and
// getters for its global variables keep Swift from touching C globals.
#ifndef STRATA_EDIT_SHIM_H
#define STRATA_EDIT_SHIM_H

#include <stdio.h>
#include <editline/readline.h>

/// Names the program (for ~/.editrc sections) and installs the completion
/// function, which alone decides the candidates (no file-name fallback).
static inline void strata_edit_setup(rl_completion_func_t *complete) {
    rl_readline_name = "strata";
    rl_attempted_completion_function = complete;
    rl_completion_append_character = ' ';
}

/// Called from the completion function: no file-name completion after it.
static inline void strata_edit_completion_over(void) {
    rl_attempted_completion_over = 1;
}

/// What completion appends after a single match ('\0' for nothing).
static inline void strata_edit_append_character(int character) {
    rl_completion_append_character = character;
}

/// The whole line being edited.
static inline const char *strata_edit_line(void) {
    return rl_line_buffer;
}

/// How many entries the history holds.
static inline int strata_edit_history_length(void) {
    return history_length;
}

/// The history's first index.
static inline int strata_edit_history_base(void) {
    return history_base;
}

#endif
