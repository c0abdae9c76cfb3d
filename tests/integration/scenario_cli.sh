#!/bin/sh
# tests/integration/scenario_cli.sh: `mailbench scenario` end to end.
# `scenario show online|cached|storage --json` must carry every published
# figure (checked with jq when installed, else with grep on the text form),
# `scenario list` must list the three files, and each bad file (typo in a
# key, negative action count, string where a number belongs) must print
# exactly ONE line "FILE:LINE: FIELD: message" on stderr, nothing on
# stdout, and exit 2.  Runs in seconds; files live in a mktemp dir.
set -u
MAILBENCH=${MAILBENCH:-./mailbench}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mbscencli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
mb() {
	timeout 30 "$MAILBENCH" "$@"
}

have_jq=no
command -v jq >/dev/null 2>&1 && have_jq=yes

# check NAME PATH VALUE: PATH (jq syntax) of `scenario show NAME` is VALUE
check() {
	if [ $have_jq = yes ]; then
		jq -e "$2 == $3" "$tmp/$1.json" >/dev/null || fail "$1: $2 is not $3"
	else
		ckey=$(printf '%s' "$2" | sed 's/^\.//')
		grep -F -x -e "$ckey = $3" -e "$ckey = $3.0" "$tmp/$1.txt" >/dev/null ||
			fail "$1: $ckey is not $3"
	fi
}

for s in online cached storage; do
	mb scenario show $s --json >"$tmp/$s.json" || fail "show $s --json exited $?"
	mb scenario show $s >"$tmp/$s.txt" || fail "show $s exited $?"
	if [ $have_jq = yes ]; then
		jq -e . "$tmp/$s.json" >/dev/null || fail "$s: output is not JSON"
	fi
done

# ---- both scenarios: topology, mailbox configuration, distribution lists
for s in online cached; do
	check $s .topology.users 8000
	check $s .topology.databases 12
	check $s .topology.storage_groups 3
	check $s .topology.db_cache_mb 896
	check $s .topology.mailbox_mb 25
	check $s .topology.users_per_client 1000
	check $s .mailbox.inbox_messages 100
	check $s .mailbox.deleted_items_messages 1
	check $s .mailbox.new_folders 10
	check $s .mailbox.messages_per_folder 10
	check $s .mailbox.calendar_appointments 25
	check $s .mailbox.contacts 128
	check $s .mailbox.avg_message_kb 75
	check $s .distribution_lists.per_site 100
	check $s .distribution_lists.min_members 2
	check $s .distribution_lists.avg_members 10
	check $s .distribution_lists.max_members 20
done

# ---- actions per 8-hour day: key online cached
while read -r key on ca; do
	check online ".actions_per_day.$key" "$on"
	check cached ".actions_per_day.$key" "$ca"
done <<'T'
send_mail 12 7
process_inbox 12 20
browse_mail 20 0
check_free_busy 1 4
request_meeting 1.4 2
make_appointment 2.8 4
browse_calendar 6 1
journal_applications 0 0
logoff 0 3
browse_contacts 0 0
create_contact 0 0
T
check online .messages_received_per_day 208
check online .messages_sent_per_day 52
check cached .messages_received_per_day 161.9
check cached .messages_sent_per_day 44.12

# ---- scenario 1 results: counter (a) (b) (c) (d)
while read -r key a b c d; do
	i=0
	for v in $a $b $c $d; do
		check online ".published.columns[$i].values.$key" "$v"
		i=$((i + 1))
	done
done <<'T'
users 8000 8000 8000 8000
processor_pct 75 76 75 57
context_switches_per_s 8300 7833 10183 13487
local_delivery_rate 30 30 30 30
network_kbit_per_s 3154 1594 1604 1613
db_transfers_per_s 2088 1980 1929 1955
log_writes_per_s 377 314 353 398
disk_mb_per_s 19.9 20.4 18.9 17.9
db_cache_mb 864 896 896 896
rpc_ops_per_s 950 955 940 925
rpc_requests 7 8 8 7
client_latency_ms 96 100 95 105
store_virtual_mb 2047 2075 2080 2082
T
for i in 0 1 2; do check online ".published.columns[$i].smt" false; done
check online ".published.columns[3].smt" true
check online ".published.columns[0].heading" '"(a) Windows 2000 SP3, Exchange 2000 SP3, Outlook 2000 online"'
check online ".published.columns[1].heading" '"(b) Windows 2000 SP3, Exchange 2003, Outlook 2003 online"'
check online ".published.columns[2].heading" '"(c) Windows Server 2003, Exchange 2003, Outlook 2003 online"'
check online ".published.columns[3].heading" '"(d) as (c) with Hyper-Threading on"'

# ---- scenario 2 results: counter (a) (b)
while read -r key a b; do
	check cached ".published.columns[0].values.$key" "$a"
	check cached ".published.columns[1].values.$key" "$b"
done <<'T'
users 8000 8000
processor_pct 64 57
context_switches_per_s 7981 6488
local_delivery_rate 23 23
network_kbit_per_s 3613 1765
db_transfers_per_s 1496 1355
log_writes_per_s 304 315
disk_mb_per_s 17.7 16.2
db_cache_mb 896 864
rpc_ops_per_s 1205 1193
rpc_requests 8 7
store_virtual_mb 2016 2076
T
# no client latency was published for scenario 2
if [ $have_jq = yes ]; then
	check cached ".published.columns[0].values.client_latency_ms" null
	check cached ".published.columns[1].values.client_latency_ms" null
fi
check cached ".published.columns[0].heading" '"(a) Windows 2000 SP3, Exchange 2000 SP3"'
check cached ".published.columns[1].heading" '"(b) Windows 2000 SP3, Exchange 2003"'

# ---- storage test: settings and the published rows
check storage .database.page_kb 32
check storage .thresholds.db_read_avg_ms_max 20
check storage .thresholds.log_write_avg_ms_max 10
check storage .mix.insert_pct 17
check storage .mix.replace_pct 68
check storage .mix.delete_pct 5
check storage .mix.seek_pct 10
if [ $have_jq = yes ]; then
	check storage .run.threads '[4, 8, 12]'
fi
i=0
while read -r threads iops rd lw; do
	check storage ".published.rows[$i].threads" "$threads"
	check storage ".published.rows[$i].iops" "$iops"
	check storage ".published.rows[$i].db_read_ms" "$rd"
	check storage ".published.rows[$i].log_write_ms" "$lw"
	i=$((i + 1))
done <<'T'
4 5580 1.16 0.99
8 10147 1.29 0.99
12 14351 1.42 0.98
T

# ---- list
mb scenario list >"$tmp/list.txt" || fail "scenario list exited $?"
for s in online cached storage; do
	grep -q "^$s " "$tmp/list.txt" || fail "scenario list misses $s"
done

# ---- a file of one's own changes only the user count
printf 'base = "online";\nrun = { users = 500; };\n' >"$tmp/my-lab.cfg"
mb scenario show "$tmp/my-lab.cfg" >"$tmp/lab.txt" || fail "my-lab.cfg exited $?"
grep -q -x 'run.users = 500' "$tmp/lab.txt" || fail "my-lab.cfg: run.users is not 500"
grep -q -x 'topology.users = 8000' "$tmp/lab.txt" || fail "my-lab.cfg lost topology.users"

# ---- bad files: one line FILE:LINE: FIELD: message, exit code 2
bad() { # NAME CONTENT EXPECTED-LINE
	printf '%b' "$2" >"$tmp/$1.cfg"
	mb scenario show "$tmp/$1.cfg" >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
	[ $rc -eq 2 ] || fail "$1: exit code $rc, want 2"
	[ -s "$tmp/$1.out" ] && fail "$1: wrote to stdout"
	[ "$(wc -l <"$tmp/$1.err")" -eq 1 ] || fail "$1: stderr is not one line: $(cat "$tmp/$1.err")"
	grep -q -x -F "$tmp/$1.cfg:$3" "$tmp/$1.err" ||
		fail "$1: got '$(cat "$tmp/$1.err")', want '$tmp/$1.cfg:$3'"
}
bad typo 'base = "online";\nrun = {\n\tuserz = 500;\n};\n' \
	'3: run.userz: unknown key (did you mean "users"?)'
bad negative 'base = "online";\nactions_per_day = { send_mail = -12; };\n' \
	'2: actions_per_day.send_mail: must be between 0 and 100000'
bad string 'base = "online";\n\ntopology = { users = "eight thousand"; };\n' \
	'3: topology.users: must be an integer, not a string'

# usage errors exit 2 too
mb scenario >/dev/null 2>&1
[ $? -eq 2 ] || fail "scenario without an action did not exit 2"
mb scenario show online --no-such-flag >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown flag did not exit 2"
mb scenario --help | grep -q '^usage: mailbench scenario' || fail "scenario --help"
mb counters --json >"$tmp/counters.json" || fail "counters --json exited $?"
if [ $have_jq = yes ]; then
	[ "$(jq -r '.[0:13] | map(.key) | join(",")' "$tmp/counters.json")" = \
		"users,processor_pct,context_switches_per_s,local_delivery_rate,network_kbit_per_s,db_transfers_per_s,log_writes_per_s,disk_mb_per_s,db_cache_mb,rpc_ops_per_s,rpc_requests,client_latency_ms,store_virtual_mb" ] ||
		fail "counters --json: published keys"
fi

if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "scenario_cli: all checks passed (jq: $have_jq)"
exit 0
