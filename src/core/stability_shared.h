/* Scorers that share their parameters (stability.c), for the engine:
 * every tab's scorer reads the engine's one copy instead of holding its
 * own. Internal to src/core and its tests. */
#ifndef UITRAIL_CORE_STABILITY_SHARED_H
#define UITRAIL_CORE_STABILITY_SHARED_H

#include "uitrail/stability.h"

/* As ut_stab_new, but the scorer reads `p` (not NULL) in place: `p` must
 * outlive it and not change while it lives. */
ut_status ut__stab_new_shared(const ut_stab_params *p, ut_stab **out);
/* The bytes of a scorer ut__stab_new_shared made (one allocation). */
size_t ut__stab_shared_size(void);

#endif
