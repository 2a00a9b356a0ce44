/*
 * topic.c -- event names and hark topics, and Ruby patterns (a Regexp, or anything
 * with ===) answered for hark ahead of time: hark asks a match pattern under its
 * notifier lock, where Ruby cannot run, so every pattern is asked in Ruby about a
 * name before hark needs the answer -- when the name is first seen, and when the
 * pattern is subscribed about every name seen so far. Both are asked with the form
 * the name was first seen in, so that the answer is the same whichever came first.
 */
#include "hark_ext.h"

#include <ruby/encoding.h>

#include <stdlib.h>
#include <string.h>

__thread st_table *tls_new_name_answers;

/* The topic name of a Ruby event name: a String as is, anything else as to_s. */
static VALUE name_string(VALUE name)
{
    if (RB_TYPE_P(name, T_STRING))
        return name;
    if (SYMBOL_P(name))
        return rb_sym2str(name);
    return rb_obj_as_string(name);
}

/*
 * Asks every Ruby matcher whether it matches `str` (a name hark does not know
 * yet); the answers go where the match callback finds them while the name is
 * interned. Runs Ruby, so a matcher may be added meanwhile: the walk is repeated
 * for the matchers not asked yet (never for those already answered, so matchers
 * subscribed by another thread all along cannot keep it from ending). A matcher
 * may also be unsubscribed meanwhile: sweep() leaves the list alone until the walk
 * is over. Exceptions raised by a pattern's === propagate.
 */
static void precompute_new_name(fanout *f, VALUE str, st_table **answers)
{
    *answers = NULL;
    if (f->matchers == 0)
        return;
    st_table *t = st_init_numtable();
    int state = 0;
    f->walkers++;
    for (;;) {
        uint64_t gen = f->matcher_generation;
        for (rsub *s = f->subs; s && !state; s = s->next) {
            if (!s->matcher || s->released || st_lookup(t, (st_data_t)s, NULL))
                continue;
            struct call cl = {s->pattern, id_eqq, 1, &str};
            VALUE r = rb_protect(do_call, (VALUE)&cl, &state);
            if (!state)
                st_insert(t, (st_data_t)s, RTEST(r) ? 1 : 0);
        }
        if (state || gen == f->matcher_generation)
            break;
    }
    f->walkers--;
    if (state) {
        st_free_table(t);
        rb_jump_tag(state);
    }
    *answers = t;
}

/* Keeps each matcher's answer for a newly interned name, for later subscribe-time
 * questions, and frees the answers. */
static void keep_answers(fanout *f, st_table *answers, const char *key)
{
    for (rsub *s = f->subs; s; s = s->next) {
        st_data_t v;
        if (s->matcher && st_lookup(answers, (st_data_t)s, &v))
            st_insert(s->names, (st_data_t)key, v);
    }
    st_free_table(answers);
}

/* Returns the topic of a Ruby name, interning it (and teaching the matchers) when new. */
static hark_topic *topic_lookup(fanout *f, VALUE name)
{
    VALUE str = name_string(name);
    const char *cname = StringValueCStr(str);
    st_data_t found;
    if (st_lookup(f->topics, (st_data_t)cname, &found))
        return (hark_topic *)found;
    st_table *answers;
    precompute_new_name(f, str, &answers);
    cname = StringValueCStr(str); /* Ruby ran: the string may have moved */
    if (st_lookup(f->topics, (st_data_t)cname, &found)) {
        if (answers)
            st_free_table(answers);
        return (hark_topic *)found;
    }
    hark_topic *t;
    tls_new_name_answers = answers;
    tls_registry++;
    int rc = hark_topic_get(&t, f->n, cname);
    tls_registry--;
    tls_new_name_answers = NULL;
    if (rc != 0) {
        if (answers)
            st_free_table(answers);
        raise_hark(rc, "event name");
    }
    const char *key = hark_topic_name(t);
    if (answers)
        keep_answers(f, answers, key);
    st_insert(f->topics, (st_data_t)key, (st_data_t)t);
    st_insert(f->forms, (st_data_t)key, (st_data_t)rb_enc_get_index(str));
    return t;
}

static inline unsigned recent_slot(VALUE name)
{
    return (unsigned)((name >> 3) ^ (name >> 9)) & (RECENT_NAMES - 1);
}

/* The slot of a name's bytes among the names recently looked up by content: its
 * length and its first and last eight bytes (where event names differ: "render_partial"
 * and "render_template", ".action_view" and ".active_record"). */
static inline unsigned content_slot(const char *p, long len)
{
    uint64_t head = 0, tail = 0;
    memcpy(&head, p, len < 8 ? (size_t)len : 8);
    if (len > 8)
        memcpy(&tail, p + len - 8, 8);
    uint64_t h = (head ^ (tail * 0x9e3779b97f4a7c15u) ^ (uint64_t)len) * 0xff51afd7ed558ccdu;
    return (unsigned)(h >> 58) & (RECENT_NAMES - 1);
}

/*
 * The topic of an event name. A frozen String is looked up by identity first (its
 * bytes cannot change). Any other String -- ActionView makes "render_#{kind}.action_view"
 * anew for every render -- by its bytes among the names recently looked up, each
 * compared in full with its topic's name, before the table of every name; a name that
 * is not a String, or is not there, goes through topic_lookup.
 */
hark_topic *topic_for(fanout *f, VALUE name)
{
    if (!RB_TYPE_P(name, T_STRING))
        return topic_lookup(f, name);
    if (RB_OBJ_FROZEN(name)) {
        unsigned i = recent_slot(name);
        if (f->recent[i].name == name)
            return f->recent[i].topic;
        hark_topic *t = topic_lookup(f, name);
        f->recent[i].name = name;
        f->recent[i].topic = t;
        return t;
    }
    const char *p = RSTRING_PTR(name);
    long len = RSTRING_LEN(name);
    if (len > 0) {
        unsigned i = content_slot(p, len);
        hark_topic *t = f->by_content[i].topic;
        /* A topic's name has no NUL byte: equal bytes are a valid name. */
        if (t && f->by_content[i].len == len && memcmp(hark_topic_name(t), p, (size_t)len) == 0)
            return t;
        t = topic_lookup(f, name);
        f->by_content[i].topic = t;
        f->by_content[i].len = len;
        return t;
    }
    return topic_lookup(f, name);
}

#ifdef HAVE_HARK_MATCH
struct fill {
    const char **names;
    st_index_t i, n;
};

static int fill_cb(st_data_t key, st_data_t val, st_data_t arg)
{
    (void)val;
    struct fill *fill = (struct fill *)arg;
    if (fill->i < fill->n)
        fill->names[fill->i++] = (const char *)key;
    return ST_CONTINUE;
}

/*
 * The String a pattern subscribed now is asked about an interned name with: the
 * name's bytes in the encoding of the String it was first seen as, which is what the
 * patterns subscribed before it were asked with. Every name of a fanout is interned
 * through Ruby, so it has one; were it not, the name would be asked as UTF-8 when its
 * bytes are valid UTF-8, else as binary.
 */
static VALUE first_form(fanout *f, const char *name)
{
    long len = (long)strlen(name);
    st_data_t enc;
    VALUE str;
    if (st_lookup(f->forms, (st_data_t)name, &enc)) {
        str = rb_enc_str_new(name, len, rb_enc_from_index((int)enc));
    } else {
        str = rb_utf8_str_new(name, len);
        if (rb_enc_str_coderange(str) == ENC_CODERANGE_BROKEN)
            rb_enc_associate_index(str, rb_ascii8bit_encindex());
    }
    return rb_obj_freeze(str);
}

/* Whether the pending exception is an Encoding::CompatibilityError (which it then
 * clears). */
static bool take_compat_error(void)
{
    if (!rb_obj_is_kind_of(rb_errinfo(), rb_eEncCompatError))
        return false;
    rb_set_errinfo(Qnil);
    return true;
}

/*
 * Asks a new matcher's pattern about every name interned so far, into s->names.
 * Ruby runs, so another thread may intern names meanwhile: repeats until the table
 * is stable. Returns 0, -1 when out of memory, or the jump tag a pattern's === left
 * by (the caller then frees s and resumes the jump).
 *
 * A pattern that cannot be matched against a name's form (a non-ASCII Regexp and a
 * name first seen in another encoding: Encoding::CompatibilityError) does not match
 * that name. Rails never asks at subscribe time, so raising here would refuse a
 * subscription Rails makes, over a name it may never instrument again.
 */
int ask_known_names(fanout *f, rsub *s)
{
    int state = 0;
    for (;;) {
        st_index_t n = f->topics->num_entries;
        const char **names = malloc((n ? n : 1) * sizeof *names);
        if (!names)
            return -1;
        struct fill fill = {names, 0, n};
        st_foreach(f->topics, fill_cb, (st_data_t)&fill);
        for (st_index_t j = 0; j < fill.i && !state; j++) {
            if (st_lookup(s->names, (st_data_t)names[j], NULL))
                continue;
            VALUE str = first_form(f, names[j]);
            struct call cl = {s->pattern, id_eqq, 1, &str};
            VALUE r = rb_protect(do_call, (VALUE)&cl, &state);
            if (state == TAG_RAISE && take_compat_error()) {
                state = 0;
                r = Qfalse;
            }
            if (!state)
                st_insert(s->names, (st_data_t)names[j], RTEST(r) ? 1 : 0);
        }
        free(names);
        if (state)
            return state;
        if (f->topics->num_entries == n)
            return 0;
    }
}

/* hark's match callback, under its lock: answered from what Ruby said beforehand. */
bool cb_match(const char *name, void *data)
{
    rsub *s = data;
    st_data_t v;
    if (tls_new_name_answers && st_lookup(tls_new_name_answers, (st_data_t)s, &v))
        return v != 0;
    if (s->names && st_lookup(s->names, (st_data_t)name, &v))
        return v != 0;
    tls_match_missing = true;
    return false;
}
#endif
