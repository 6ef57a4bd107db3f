/*
 * Immediate writes across crashes and retries (docs/deployment.md, "Every write once"),
 * as a model for the SPIN model checker (`make verify`).
 *
 * A client sends one turn under its Idempotency-Key; each try of it (a process here)
 * may run on any replica. A try claims the session (a fencing token; a claim may lapse
 * at any time, its replica slow or dead), proposes the turn's one immediate write, and
 * commits the turn, fenced by its token. Before the write runs, its intent is stored
 * under the write's key (BeginWrite: the record, or what an earlier try left); after
 * it, the outcome (FinishWrite, only onto a record still running). A record found
 * running is a try that never returned: the write runs again, under the same key, only
 * when the backend takes a key; otherwise it is marked uncertain and not run. Any try
 * may crash at any step; the client tries again while no try has committed. The
 * backend is, by the model's choice, one that takes a key (a second delivery under a
 * key it has seen takes no effect) or one that does not (every delivery takes effect).
 *
 * Checked: the write takes effect at most once; every delivery to a backend that takes
 * a key carries the one key; its outcome is recorded at most once; a committed turn
 * that says the write was done has it done exactly once; a turn commits unless a try
 * crashed; and no deadlock.
 *
 * Each of NO_INTENT (the record written only after the write), KEY_PER_TRY (the key drawn
 * by each try, as a turn id is), RERUN_UNCERTAIN (a running record run again whatever
 * the backend) and RECORD_EVERY_OUTCOME (FinishWrite onto any record) removes one
 * safeguard; `make verify` checks that SPIN then finds a violation.
 */

#define TRIES 3
#ifndef CRASHES
#define CRASHES 2
#endif
#define NONE 255

bool takes_key;           /* the backend's kind, chosen at the start */

/* The write-ahead record under the write's key. */
mtype = { absent, running, succeeded, uncertain };
mtype rec = absent;
byte outcomes = 0;        /* outcomes recorded onto it */

/* The backend. */
byte effects = 0;         /* times the write took effect */
byte keys_delivered = 0;  /* the keys it was sent, one bit each */
byte keys_applied = 0;    /* the keys it took effect under (a backend that takes keys) */

/* The session row: its claim, and the turn once committed (what its reply says). */
byte claim_owner = NONE;
byte claim_token = 0;
bool claim_lapsed = false;
bool committed = false;
mtype committed_says = absent;

byte crashes = 0;
byte tries = 0;
byte finished = 0;

inline crash_point() {
  if
  :: crashes < CRASHES -> crashes++; goto crashed
  :: true
  fi
}

inline deliver(key) {
  atomic {
    keys_delivered = keys_delivered | key;
    if
    :: takes_key && (keys_applied & key) == 0 -> effects++; keys_applied = keys_applied | key
    :: takes_key && (keys_applied & key) != 0 -> skip
    :: !takes_key -> effects++
    fi
  }
}

proctype Try(byte id) {
  byte token, key;
  mtype found, says = absent;
  bool go = false;

  /* ClaimSession; a committed turn's retry gets its stored result (nothing runs). */
  atomic {
    if
    :: committed -> goto done
    :: !committed && (claim_owner == NONE || claim_lapsed) ->
         claim_token++; token = claim_token; claim_owner = id; claim_lapsed = false
    fi
  }
  crash_point();
#ifdef KEY_PER_TRY
  key = 1 << id;
#else
  key = 1;  /* WriteLedger::Key: the client's key, the write's place, tool and arguments */
#endif
  /* BeginWrite */
  atomic {
#ifdef NO_INTENT
    found = rec
#else
    found = rec;
    if
    :: rec == absent -> rec = running
    :: else -> skip
    fi
#endif
  }
  if
  :: found == absent -> go = true
  :: found == running ->
#ifdef RERUN_UNCERTAIN
       go = true
#else
       if
       :: takes_key -> go = true  /* RetryWrite: another try under the same key */
       :: !takes_key ->
            atomic { if :: rec == running -> rec = uncertain; outcomes++ :: else -> skip fi };
            says = uncertain
       fi
#endif
  :: found == succeeded -> says = succeeded  /* an earlier try's outcome stands */
  :: found == uncertain -> says = uncertain
  fi;
  if
  :: go ->
       crash_point();
       deliver(key);
       crash_point();
       /* FinishWrite */
       atomic {
#ifdef RECORD_EVERY_OUTCOME
         rec = succeeded; outcomes++
#else
         if
         :: rec == running -> rec = succeeded; outcomes++
         :: else -> skip
         fi
#endif
       }
       says = succeeded
  :: else -> skip
  fi;
  crash_point();
  /* CommitTurn, fenced by the claim's token */
  atomic {
    if
    :: claim_token == token && !committed -> committed = true; committed_says = says
    :: else -> skip
    fi
  }
  atomic { if :: claim_token == token -> claim_owner = NONE :: else -> skip fi }  /* ReleaseSession */
  goto done;
crashed:
  skip;
done:
  finished++
}

/* Time: a claim lapses whenever it likes (its replica slow or dead). */
active proctype Clock() {
end:
  do
  :: atomic { claim_owner != NONE && !claim_lapsed -> claim_lapsed = true }
  od
}

init {
  if
  :: takes_key = true
  :: takes_key = false
  fi;
  /* The client: a try, and another whenever it has no answer yet (the earlier try may
   * still be running: slow, not dead), while none committed. */
  do
  :: tries < TRIES && !committed -> atomic { run Try(tries); tries++ }
  :: tries == TRIES || committed -> break
  od;
  finished == tries;
  assert(effects <= 1);                                     /* never twice */
  assert(!takes_key || keys_delivered == 0 || keys_delivered == 1 || keys_delivered == 2 || keys_delivered == 4);
  assert(outcomes <= 1);                                    /* recorded once */
  assert(!committed || committed_says != succeeded || effects == 1);  /* no false "done" */
  assert(crashes > 0 || committed)                          /* a turn no crash touched completes */
}
