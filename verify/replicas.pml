/*
 * The protocol that lets several `reins serve` replicas share one PostgreSQL database,
 * as a model for the SPIN model checker (`make verify`). What it covers and what it
 * abstracts away: docs/deployment.md, "The protocol, checked".
 *
 * Replicas run turns of one session. A turn claims the session (a compare-and-set on
 * the session row giving a new fencing token), reads the floor lease, runs (the model
 * and tools, abstracted away: anything can happen meanwhile), and commits in one
 * transaction: the fence (the token is still the session's), the turn, the lease's
 * compare-and-set on its version, and the turn's deferred write into the outbox, or,
 * for a turn that deferred nothing, the end of its claim (TurnRecord::release_claim).
 * After the commit the write is claimed in the outbox, delivered with its idempotency
 * key and its outcome recorded, and the claim released. Any replica may crash at any step and restart empty; a
 * claim may lapse at any time (its replica is slow or dead); a running outbox entry
 * may lapse at any time and be taken over; the lease may expire or be cancelled.
 *
 * Checked: I6 (two turns of a session never commit interleaved: a commit finds the
 * session exactly as its turn saw it when it began), the floor (no turn is admitted
 * for a speaker while another speaker holds the lease), I12 (every committed write is
 * delivered, every delivery uses the write's one key, and its outcome is recorded
 * exactly once), and no deadlock.
 *
 * Each of NO_FENCE, TRUST_THE_CACHE and RECORD_EVERY_OUTCOME (spin -D...) removes one
 * safeguard; `make verify` checks that SPIN then finds a violation, so the model is
 * known to be able to fail.
 */

#ifndef R
#define R 2           /* replicas: 3 does not fit an exhaustive search on a 24 GiB machine */
#endif
#define TURNS 1       /* turns each replica runs */
#define W (R * TURNS) /* deferred writes: one per committed turn, at most */
#ifndef CRASHES
#define CRASHES 2     /* crashes in one run, all replicas together */
#endif
#define NONE 255

/* The session row: its claim and the committed turns (its version). */
byte claim_owner = NONE;  /* claim_owner IS NULL */
byte claim_token = 0;
bool claim_lapsed = false; /* claim_until <= the server's now */
byte turn_count = 0;

/* The leases row: the speaker holding the floor and the row's version. */
byte lease_owner = NONE;
byte lease_version = 0;

/* The outbox, one entry per committed turn (index = turn number - 1); no_write: the
 * turn deferred nothing. */
mtype = { absent, pending, running, done, no_write };
mtype w_status[W];
bool w_lapsed[W];        /* running for longer than the takeover lapse */
byte w_key[W];           /* the idempotency key it was committed with */
byte delivered_keys[W];  /* what the backend saw: the key of every delivery */
byte recorded[W];        /* outcomes recorded */

byte crashes = 0;
byte finished = 0;

inline crash_point() {
  if
  :: crashes < CRASHES -> crashes++; goto crashed
  :: true
  fi
}

/* ClaimOutbox, then the delivery and RecordDeferredOutcome; may stop at a crash. */
inline deliver(w) {
  atomic {
    if
    :: w_status[w] == pending || (w_status[w] == running && w_lapsed[w]) ->
         w_status[w] = running; w_lapsed[w] = false; claimed = true
    :: else -> claimed = false
    fi
  }
  if
  :: claimed ->
       crash_point();
       atomic {
         assert(delivered_keys[w] == 0 || delivered_keys[w] == w_key[w]); /* a repeat uses the same key */
         delivered_keys[w] = w_key[w]
       }
       crash_point();
       atomic {  /* one transaction: only an entry not yet done gets its outcome */
#ifdef RECORD_EVERY_OUTCOME
         w_status[w] = done; recorded[w]++
#else
         if
         :: w_status[w] != done -> w_status[w] = done; recorded[w]++
         :: else -> skip
         fi
#endif
       }
  :: else -> skip
  fi;
  claimed = false
}

proctype Replica(byte id; byte speaker) {
  byte turns = 0, token, seen, cache = 0, lv, mine, w;
  bool admitted, take_floor, claimed, ended;

start:
  do
  :: turns < TURNS ->
       turns++;
       /* ClaimSession: one UPDATE ... WHERE claim_owner IS NULL OR claim_until <= now */
       atomic {
         claim_owner == NONE || claim_lapsed ->
           claim_token++; claim_owner = id; claim_lapsed = false;
           token = claim_token;
           /* the cached copy is validated by the version the claim returns */
#ifndef TRUST_THE_CACHE
           if
           :: cache != turn_count -> cache = turn_count
           :: else -> skip
           fi;
#endif
           seen = cache
       }
       crash_point();
       atomic { admitted = (lease_owner == NONE || lease_owner == speaker); lv = lease_version }
       if
       :: admitted -> take_floor = true
       :: true -> take_floor = false
       fi;
       crash_point();  /* the model and the tools run here, for as long as they take */
       /* CommitTurn: one transaction, all or nothing */
       mine = NONE;
       atomic {
         if
#ifdef NO_FENCE
         :: (!take_floor || lease_version == lv) ->
#else
         :: claim_token == token && (!take_floor || lease_version == lv) ->
#endif
              assert(turn_count == seen);                                      /* I6 */
              assert(!admitted || lease_owner == NONE || lease_owner == speaker); /* the floor */
              if
              :: take_floor -> lease_owner = speaker; lease_version++
              :: else -> skip
              fi;
              mine = turn_count; turn_count++; cache = turn_count;
              if
              :: w_status[mine] = pending; w_key[mine] = mine + 1
              :: w_status[mine] = no_write; claim_owner = NONE; ended = true  /* the commit ends the claim */
              fi
         :: else -> skip  /* fenced, or the floor moved: rolled back, nothing written */
         fi;
         admitted = false; take_floor = false; lv = 0; seen = 0  /* spent: keep the state small */
       }
       crash_point();
       if
       :: mine != NONE -> w = mine; deliver(w)
       :: else -> skip
       fi;
       atomic {  /* ReleaseSession, unless the commit ended the claim */
         if
         :: !ended && claim_token == token -> claim_owner = NONE
         :: else -> skip
         fi;
         ended = false
       }
  :: turns == TURNS -> break
  od;
  /* The sweep every replica runs at start and every minute: what is left unfinished
   * runs here once it is quiet (a running entry once it lapsed). */
  for (w : 0 .. W - 1) {
    (w_status[w] != running || w_lapsed[w]);
    deliver(w)
  }
  finished++;
  goto end;
crashed:
  cache = 0;  /* a restarted replica has nothing in memory */
  goto start;
end:
  skip
}

/* Time: claims, leases and running outbox entries lapse whenever they like. */
active proctype Clock() {
end:
  do
  :: atomic { claim_owner != NONE && !claim_lapsed -> claim_lapsed = true }
  :: atomic { lease_owner != NONE -> lease_owner = NONE }  /* the lease expired */
  :: atomic { w_status[0] == running && !w_lapsed[0] -> w_lapsed[0] = true }
  :: atomic { w_status[1] == running && !w_lapsed[1] -> w_lapsed[1] = true }
#if R * TURNS > 2
  :: atomic { w_status[2] == running && !w_lapsed[2] -> w_lapsed[2] = true }
#endif
  od
}

/* DELETE .../lease: a compare-and-set on the lease's version, outside any turn. */
active proctype Cancel() {
  byte lv;
  atomic { lv = lease_version }
  atomic { if :: lease_version == lv -> lease_owner = NONE; lease_version++ :: else -> skip fi }
}

init {
  byte i;
  atomic {
    for (i : 0 .. W - 1) { w_status[i] = absent }
    for (i : 0 .. R - 1) { run Replica(i, i % 2) }
  }
  finished == R;
  for (i : 0 .. W - 1) {
    if
    :: i < turn_count && w_status[i] == no_write ->
         assert(recorded[i] == 0 && delivered_keys[i] == 0)  /* nothing ran for a turn that deferred nothing */
    :: i < turn_count && w_status[i] != no_write ->
         assert(w_status[i] == done);            /* every committed write ran... */
         assert(recorded[i] == 1);                /* ...and its outcome was recorded once */
         assert(delivered_keys[i] == w_key[i]);   /* with its own key */
    :: else -> assert(w_status[i] == absent)      /* no write of an uncommitted turn */
    fi
  }
}
