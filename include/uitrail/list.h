/* uitrail: one intrusive doubly-linked list for every module (libuv's
 * queue.h is the model).
 *
 * A list is a circular chain through a sentinel `ut_list` head; an element
 * embeds a `ut_list` link and is recovered with ut_list_entry(). Nothing
 * here allocates: the owner of an element owns its memory, and an element
 * must be removed from every list before it is freed.
 *
 * A link that is on no list points at itself (ut_list_init, and again after
 * ut_list_remove), so ut_list_linked() tells whether it is on one and a
 * second remove is harmless. */
#ifndef UITRAIL_LIST_H
#define UITRAIL_LIST_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ut_list {
    struct ut_list *next;
    struct ut_list *prev;
} ut_list;

/* Makes `l` an empty list head, or an unlinked element link. */
static inline void ut_list_init(ut_list *l)
{
    l->next = l;
    l->prev = l;
}

static inline bool ut_list_empty(const ut_list *head)
{
    return head->next == head;
}

/* Whether the element link `l` is on a list (it must have been
 * initialized). */
static inline bool ut_list_linked(const ut_list *l)
{
    return l->next != l;
}

/* Links `l` (unlinked) right after `at`: at the front when `at` is the head. */
static inline void ut_list_insert_after(ut_list *at, ut_list *l)
{
    assert(!ut_list_linked(l));
    l->next = at->next;
    l->prev = at;
    at->next->prev = l;
    at->next = l;
}

static inline void ut_list_push_front(ut_list *head, ut_list *l)
{
    ut_list_insert_after(head, l);
}

static inline void ut_list_push_back(ut_list *head, ut_list *l)
{
    ut_list_insert_after(head->prev, l);
}

/* Unlinks `l` from its list, if it is on one, and leaves it unlinked. */
static inline void ut_list_remove(ut_list *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    ut_list_init(l);
}

/* Moves `l`, on this list or on none, to the front of `head`. */
static inline void ut_list_move_front(ut_list *head, ut_list *l)
{
    ut_list_remove(l);
    ut_list_push_front(head, l);
}

/* The first or last link of `head`, or NULL when it is empty. */
static inline ut_list *ut_list_first(const ut_list *head)
{
    return ut_list_empty(head) ? NULL : head->next;
}

static inline ut_list *ut_list_last(const ut_list *head)
{
    return ut_list_empty(head) ? NULL : head->prev;
}

/* The element of type `type` whose member `member` is the link `ptr`. */
#define ut_list_entry(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Visits every link of `head` front to back; `pos` may not be removed. */
#define ut_list_foreach(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* As ut_list_foreach, but `pos` may be removed (and freed): `tmp` holds
 * the next link. */
#define ut_list_foreach_safe(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

#endif
