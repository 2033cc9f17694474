/* listen.c: the runtime directory and the listeners: ingest.sock and
 * http.sock in the runtime directory, and the optional loopback TCP
 * listeners. Each listener hands what it accepts to conn.c with its
 * protocol: ingest.c's Forward stream or http.c's HTTP.
 *
 * Above conn.c, ingest.c, http.c and auth.c (it tells auth the addresses
 * it serves HTTP on). */
#ifndef UT_DAEMON_LISTEN_H
#define UT_DAEMON_LISTEN_H

#include <stdio.h>
#include <uv.h>

#include "auth.h"
#include "conn.h"

typedef struct ut__listener {
    ut__stream_handle h;
    ut__daemon *d;
    const ut__conn_ops *ops;
    ut__transport transport;
    bool active;
    char *path;                     /* Unix socket path (owned), NULL for TCP */
    char addr[UT__ADDR_TEXT_BYTES]; /* what to print: the path or host:port actually bound */
} ut__listener;

#define UT__LISTENERS_MAX 4

typedef struct ut__listeners {
    ut__listener l[UT__LISTENERS_MAX];
    size_t n;
} ut__listeners;

/* Creates the runtime directory (0700, owned by us) or checks an existing
 * one. */
ut_status ut__runtime_dir_prepare(const char *dir, char *err, size_t errlen);
/* Binds every listener the settings ask for. */
ut_status ut__listeners_start(ut__daemon *d, char *err, size_t errlen);
/* Prints one line per listener, "  http    tcp:127.0.0.1:7317" (the
 * readiness lines tests and scripts read). */
void ut__listeners_print(const ut__daemon *d, FILE *to);
/* Closes the listeners and removes their socket files. */
void ut__listeners_stop(ut__daemon *d);

#endif
