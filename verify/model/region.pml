/*
 * region.pml: the region guard (package lease/region) as a Promela model for
 * SPIN. docs/multi-region.md explains the guard; model_test.go runs this model.
 *
 * Two regions, r = 0 and 1, each with a lease store of its own (its identity is
 * r) and a configuration chosen by the search: a name and a region value, each
 * 0 or 1, so the search tries two regions with one value, with one name, and
 * both. One server per region starts up to 1+RESTARTS times, on its data
 * directory, which keeps the cached claim (name, value, store) across restarts.
 * A start:
 *   - trusts the cache when it matches the configuration: the same name, value
 *     and region store (region.Cached); the registry is not asked;
 *   - else asks the registry, which answers or not (a partition); no answer, no
 *     start. The claim is one atomic step on the registry (AcquireValue of the
 *     value; the record is pinned for a century, so it never goes away): the
 *     value free, the region takes it; held by the same name and store, it is
 *     the region's own; held by anyone else, refused (*ConflictError). A claim
 *     that succeeded is cached, after the registry's answer.
 * A server that started issues with its region value. With CLONES, region 0's
 * data directory is copied once, at any step, over region 1's (a data directory
 * copied from another region).
 *
 * Invariant, checked at every issue: no region value is issued by two regions
 * (two region stores): assert(by[v] == NONE || by[v] == r).
 *
 * Known-bad variants, each must break it:
 *   BUG_NO_PIN_CHECK  the claim does not look at the record: it takes the value
 *                     whoever holds it.
 *   BUG_NAME_ONLY     the claim and the cache compare the region's name only, not
 *                     its store: two regions configured with one name.
 *   BUG_TRUST_COPY    the cache is trusted without its store: a data directory
 *                     copied from another region (CLONES).
 *   BUG_CACHE_EARLY   the claim is cached before the registry answered.
 *   BUG_TRUST_ANY     any cache is trusted, whatever it names.
 */

#define NONE 255
#ifndef RESTARTS
#define RESTARTS 1
#endif

byte cfg_name[2];
byte cfg_val[2];

/* The registry: per region value, the claim's owner (name and store). */
byte held_name[2] = NONE;
byte held_store[2] = NONE;

/* Each region's data directory: its cached claim. */
bool c_ok[2];
byte c_name[2];
byte c_val[2];
byte c_store[2];

/* The witness: per region value, the store of the region that issued with it. */
byte by[2] = NONE;

#if defined(BUG_TRUST_ANY)
#define MATCH(r) (c_ok[r])
#elif defined(BUG_TRUST_COPY) || defined(BUG_NAME_ONLY)
#define MATCH(r) (c_ok[r] && c_name[r] == cfg_name[r] && c_val[r] == cfg_val[r])
#else
#define MATCH(r) (c_ok[r] && c_name[r] == cfg_name[r] && c_val[r] == cfg_val[r] && c_store[r] == r)
#endif

#ifdef BUG_NAME_ONLY
#define OURS(r, v) (held_name[v] == cfg_name[r])
#else
#define OURS(r, v) (held_name[v] == cfg_name[r] && held_store[v] == r)
#endif

inline cache(r, v) {
	c_name[r] = cfg_name[r];
	c_val[r] = v;
	c_store[r] = r;
	c_ok[r] = true
}

inline claim(r, v, ok) {
	atomic {
#ifdef BUG_NO_PIN_CHECK
		held_name[v] = cfg_name[r];
		held_store[v] = r;
		ok = true
#else
		if
		:: held_name[v] == NONE ->
			held_name[v] = cfg_name[r];
			held_store[v] = r;
			ok = true
		:: held_name[v] != NONE && OURS(r, v) -> ok = true
		:: else -> ok = false
		fi
#endif
	}
}

proctype Server(byte r) {
	byte starts = 0;
	byte v;
	bool ok;
	do
	:: starts <= RESTARTS ->
		starts++;
		v = cfg_val[r];
		ok = false;
		if
		:: MATCH(r) -> ok = true
		:: else ->
#ifdef BUG_CACHE_EARLY
			cache(r, v);
#endif
			if
			:: claim(r, v, ok);      /* the registry answers */
				if
				:: ok -> cache(r, v)
				:: else -> skip
				fi
			:: skip                 /* it does not: no start */
			fi
		fi;
		if
		:: ok ->
			atomic {
				assert(by[v] == NONE || by[v] == r);
				by[v] = r
			}
		:: else -> skip
		fi
	:: else -> break
	od
}

#ifdef CLONES
proctype Clone() {
	atomic {
		c_ok[1] = c_ok[0];
		c_name[1] = c_name[0];
		c_val[1] = c_val[0];
		c_store[1] = c_store[0]
	}
}
#endif

init {
	byte r;
	for (r : 0 .. 1) {
		if
		:: cfg_name[r] = 0
		:: cfg_name[r] = 1
		fi;
		if
		:: cfg_val[r] = 0
		:: cfg_val[r] = 1
		fi
	}
	atomic {
		run Server(0);
		run Server(1);
#ifdef CLONES
		run Clone();
#endif
	}
}
