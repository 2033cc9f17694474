/* static.c: --demo, the demo app (fixtures/demo/ under /demo/), the
 * sender (tools/sender/ under /sender/) and /demo/config.json, from the
 * source tree or the installed share/uitrail that config.c found (the
 * settings' demo_root and demo_layout). Only named files are served,
 * never through a symlink or out of the served directory.
 *
 * Above http.c; routes.c serves its rows with it. */
#ifndef UT_DAEMON_STATIC_H
#define UT_DAEMON_STATIC_H

#include "http.h"

/* Serves GET /demo/... and /sender/... from the --demo root. */
void ut__static_serve(ut__conn *c);
/* Serves GET /demo/config.json: the ingest and demo tokens. */
void ut__static_demo_config(ut__conn *c);

#endif
