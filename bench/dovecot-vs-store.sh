#!/bin/sh
# dovecot-vs-store.sh: the store against a real Dovecot on the same durable
# delivery and the same reads, per server CPU-second, in the same run.
#   delivery  a BODY_KB message to RCPTS recipients, CONNS connections back
#             to back for SECS: Dovecot by LMTP (Postfix's smtp-source -L;
#             maildir, mail_fsync = optimized, Dovecot's durable default:
#             the reply comes after the copies are fsynced), the store by
#             Submit (the reply comes after every copy is committed to its
#             log with fdatasync); compression off on both
#   read      the body of one of those messages per request, CONNS
#             connections: Dovecot by IMAP FETCH n BODY[] (Python's imaplib),
#             the store by OpenMessage + GetProps(body); both warm
# Server CPU: the store process (all threads); Dovecot's master, its live
# children and the children it reaped (/proc/PID/stat utime+stime,
# cutime+cstime of the master).  Dovecot runs from a config under a temp
# dir (dovecot -c FILE), login and LMTP processes in high-performance mode
# (service_count = 0, kept running; smtp-source -d keeps its connections),
# and is stopped at the end.
# Goal: >= 2.5x deliveries and >= 4x reads per server CPU-second.
# Not a test: run by hand from the build directory:
#   sh /path/to/bench/dovecot-vs-store.sh
# Both read the same READSET (64) newest deliveries of each recipient, so
# both read from memory: Dovecot from the page cache, the store from its
# database cache (CACHE_MB, 256 MiB; O_DIRECT, so no page cache under it).
# Knobs: CONNS (4), SECS (10), BODY_KB (75), RCPTS (4), ROUNDS (3),
# READSET (64), CACHE_MB (256).
set -eu
CONNS=${CONNS:-4}
SECS=${SECS:-10}
BODY_KB=${BODY_KB:-75}
RCPTS=${RCPTS:-4}
ROUNDS=${ROUNDS:-3}
READSET=${READSET:-64}
CACHE_MB=${CACHE_MB:-256}
B=${MB_BUILDDIR:-$(pwd)}
MB="$B/mailbench"
DRV="$B/bench/mb-peerbench"
if [ ! -x "$MB" ] || [ ! -x "$DRV" ]; then echo "build mailbench and bench/mb-peerbench first (make)"; exit 2; fi
for t in dovecot smtp-source python3; do
	command -v $t >/dev/null || { echo "skip: $t is not installed"; exit 77; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/mbdovecot.XXXXXX")
chmod 755 "$T"
spid=
cleanup() {
	[ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null
	[ -f "$T/run/master.pid" ] && kill -TERM "$(cat "$T/run/master.pid")" 2>/dev/null
	sleep 0.5
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
IMAP_PORT=$(port)
LMTP_PORT=$(port)
mkdir -p "$T/mail" "$T/run" "$T/state"
chmod 777 "$T/mail"
MUID=$(id -u nobody 2>/dev/null || echo 65534)
MGID=$(id -g nobody 2>/dev/null || echo 65534)
[ "$(id -u)" -ne 0 ] && { MUID=$(id -u); MGID=$(id -g); }
: >"$T/passwd"
# smtp-source -r N sends to u@, then 2u@, 3u@ ... (numbers prepended)
echo "u@example.org:{PLAIN}pw:$MUID:$MGID::$T/mail/u::" >>"$T/passwd"
i=0
while [ $i -le $((RCPTS + 1)) ]; do
	echo "${i}u@example.org:{PLAIN}pw:$MUID:$MGID::$T/mail/${i}u::" >>"$T/passwd"
	i=$((i + 1))
done
echo "sender@example.org:{PLAIN}pw:$MUID:$MGID::$T/mail/sender::" >>"$T/passwd"
IUSER=dovecot
LUSER=dovenull
if [ "$(id -u)" -ne 0 ]; then IUSER=$(id -un); LUSER=$(id -un); fi
cat >"$T/dovecot.conf" <<EOF
base_dir = $T/run
state_dir = $T/state
log_path = $T/dovecot.log
instance_name = mbbench$$
listen = 127.0.0.1
protocols = imap lmtp
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
default_internal_user = $IUSER
default_login_user = $LUSER
mail_location = maildir:~/Maildir
mail_fsync = optimized
postmaster_address = postmaster@example.org
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = $T/passwd
}
userdb {
  driver = passwd-file
  args = $T/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
  service_count = 0
  process_min_avail = 2
}
service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = $LMTP_PORT
  }
  unix_listener lmtp {
    mode = 0600
  }
  service_count = 0
  process_min_avail = $CONNS
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
EOF
dovecot -c "$T/dovecot.conf" || { cat "$T/dovecot.log" 2>/dev/null; echo "dovecot did not start"; exit 3; }
i=0
until [ -f "$T/run/master.pid" ] && python3 -c "import socket; socket.create_connection(('127.0.0.1', $IMAP_PORT), 1)" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 100 ] && { cat "$T/dovecot.log"; echo "dovecot not answering"; exit 3; }
	sleep 0.1
done
DPID=$(cat "$T/run/master.pid")

# Dovecot's CPU seconds: master (with reaped children) + live children
dcpu() {
	python3 - "$DPID" <<'EOF'
import os, sys
m = int(sys.argv[1]); tck = os.sysconf("SC_CLK_TCK")
def st(p):
    s = open(f"/proc/{p}/stat").read(); f = s[s.rindex(")") + 2:].split()
    return f, int(f[1])
tot = 0
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    try: f, pp = st(p)
    except OSError: continue
    if int(p) == m: tot += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    elif pp == m: tot += int(f[11]) + int(f[12])
print(f"{tot / tck:.2f}")
EOF
}

# the store: a small data directory, compression off
"$MB" init -s online --users $((RCPTS + CONNS + 2)) --scale 0.01 --data "$T/data" >/dev/null 2>&1
"$MB" store --data "$T/data" --listen 127.0.0.1:0 --compression off --cache-mb "$CACHE_MB" >"$T/store.out" 2>"$T/store.err" &
spid=$!
i=0
until grep -q '^listening on' "$T/store.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -gt 200 ] && { cat "$T/store.err"; exit 3; }
	sleep 0.05
done
SADDR=$(sed -n 's/^listening on //p' "$T/store.out")

lmtp_round() {
	n=$(awk -v s="$SECS" 'BEGIN {print int(s * 120)}') # at most; cut by the clock
	delivered=$(find "$T/mail/u/Maildir/new" -type f 2>/dev/null | wc -l)
	c0=$(dcpu); t0=$(date +%s.%N)
	timeout "$SECS" smtp-source -L -d -s "$CONNS" -m "$n" -l $((BODY_KB * 1024)) -r "$RCPTS" \
		-f sender@example.org -t u@example.org "127.0.0.1:$LMTP_PORT" >"$T/ss.out" 2>&1 || true
	c1=$(dcpu); t1=$(date +%s.%N)
	# deliveries: the new files in the first recipient's maildir
	now=$(find "$T/mail/u/Maildir/new" -type f 2>/dev/null | wc -l)
	echo "$((now - ${delivered:-0})) $c0 $c1 $t0 $t1 $now"
}

imap_round() {
	c0=$(dcpu); t0=$(date +%s.%N)
	python3 - "$IMAP_PORT" "$CONNS" "$SECS" "$RCPTS" "$READSET" >"$T/imap.out" <<'EOF'
import imaplib, sys, threading, time
port, conns, secs, rcpts = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
readset = int(sys.argv[5])
count = [0] * conns
def run(i):
    m = imaplib.IMAP4("127.0.0.1", port)
    users = ["u"] + [f"{k}u" for k in range(2, rcpts + 1)]
    m.login(f"{users[i % len(users)]}@example.org", "pw")
    typ, d = m.select("INBOX", readonly=True)
    n = min(int(d[0]), readset); k = 0; end = time.time() + secs
    while time.time() < end and n:
        k = k % n + 1
        typ, data = m.fetch(str(k), "(BODY.PEEK[])")
        if typ != "OK": break
        count[i] += 1
    m.logout()
th = [threading.Thread(target=run, args=(i,)) for i in range(conns)]
[t.start() for t in th]; [t.join() for t in th]
print(sum(count))
EOF
	c1=$(dcpu); t1=$(date +%s.%N)
	echo "$(cat "$T/imap.out") $c0 $c1 $t0 $t1"
}

: >"$T/res"
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	# shellcheck disable=SC2046 # the fields of one line are wanted
	set -- $(lmtp_round)
	d_del=$(awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%.1f", n / (b - a)}')
	echo "round $r: dovecot LMTP: $1 deliveries x $RCPTS recipients, $(awk -v a="$2" -v b="$3" 'BEGIN {print b - a}') CPU-s: $d_del per CPU-second"
	"$DRV" deliver "$SADDR" "$T/data" "$spid" "$CONNS" "$SECS" "$BODY_KB" "$RCPTS" "$T/mids" >"$T/sd.out" || { cat "$T/sd.out"; exit 3; }
	s_del=$(awk '{print $8}' "$T/sd.out")
	echo "round $r: store Submit: $(cat "$T/sd.out"): $s_del per CPU-second"
	# shellcheck disable=SC2046
	set -- $(imap_round)
	d_rd=$(awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%.1f", n / (b - a)}')
	echo "round $r: dovecot IMAP FETCH BODY[]: $1 reads, $(awk -v a="$2" -v b="$3" 'BEGIN {print b - a}') CPU-s: $d_rd per CPU-second"
	# the first READSET deliveries of each recipient (as IMAP's 1..READSET)
	awk -v k="$READSET" '++n[$1] <= k' "$T/mids" >"$T/readset"
	"$DRV" read "$SADDR" "$T/data" "$spid" "$CONNS" "$SECS" "$T/readset" >"$T/sr.out" || { cat "$T/sr.out"; exit 3; }
	s_rd=$(awk '{print $8}' "$T/sr.out")
	echo "round $r: store OpenMessage+GetProps: $(cat "$T/sr.out"): $s_rd per CPU-second"
	echo "$d_del $s_del $d_rd $s_rd" >>"$T/res"
done
med() { sort -n | awk '{v[NR] = $1} END {printf "%.2f", v[int((NR + 1) / 2)]}'; }
echo "Dovecot $(dovecot --version | cut -d' ' -f1), maildir, login and LMTP processes service_count = 0; $CONNS connections, ${BODY_KB} KB, $RCPTS recipients, ${SECS}s per phase, $ROUNDS rounds alternating"
echo "RESULT reads per server CPU-second, store / Dovecot (median): $(awk '{print $4 / $3}' "$T/res" | med) (goal >= 4)"
echo "RESULT deliveries per server CPU-second, store / Dovecot (median): $(awk '{print $2 / $1}' "$T/res" | med) (goal >= 2.5)"
