/* The dialog rules (dialogs.c): the dialogs a tab has open, with their
 * latest snapshot, and what a dialog opening or closing does to the ring
 * and to the pending click. */
#ifndef UITRAIL_CORE_DIALOGS_H
#define UITRAIL_CORE_DIALOGS_H

#include "engine_internal.h"

/* Forgets every dialog `t` has open (the page went away). */
void ut__dialogs_free(ut__tab *t);
ut_status ut__apply_dialog_open(ut__tab *t, const ut_event *ev, int64_t now);
ut_status ut__apply_dialog_close(ut__tab *t, const ut_event *ev, int64_t now);

#endif
