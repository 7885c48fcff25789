#!/usr/bin/env bash
# collect-slurm-records.sh: gather what a Slurm cluster records about its
# jobs, nodes and settings into one directory (or tarball), the records
# bundle that `schedsim validate BUNDLE` replays. Run it on a login node as
# any user that may run sacct -a (an operator or a Slurm admin); it only
# reads: every command it runs is a show/query.
#
#   manifest.txt          what was collected: window, versions, cluster,
#                         each command with its exit status, file sizes
#                         and SHA-256 sums
#   sacct.txt             sacct -a -X -D -P over the window (every run of a
#                         requeued job), the fields schedsim reads that
#                         this sacct knows (see FIELDS below)
#   scontrol-config.txt   scontrol show config (the settings in effect)
#   conf/                 slurm.conf, gres.conf, topology.conf and every
#                         file they Include, in their layout relative to
#                         slurm.conf's directory (slurmdbd.conf is never
#                         read: it holds the database password)
#   assoc.txt             sacctmgr show assoc -P (the fair-share tree)
#   qos.txt               sacctmgr show qos -P
#   event.txt             sacctmgr show event -P over the window (node
#                         down/drain/up times as slurmdbd recorded them)
#   reservation.txt       sacctmgr show reservation -P over the window
#                         (advance reservations: nodes, start, end)
#   nodes.txt, partitions.txt
#                         scontrol show node|partition -o (state now)
#   sshare.txt            sshare -a -l -P (fair-share usage now)
#   *.stderr              what a command printed on stderr, when anything
#
# Usage:
#   scripts/collect-slurm-records.sh [-S START] [-E END] [-o OUT] [-M CLUSTER] [--tar]
#     -S START   window start, any sacct time (default: now-7days)
#     -E END     window end (default: now)
#     -o OUT     output directory (default: ./slurm-records-YYYYmmddTHHMMSS);
#                with --tar, OUT.tar.gz is written and the directory removed
#     -M CLUSTER the cluster to ask sacct/sacctmgr about (default: the local one)
#     -c CONF    slurm.conf to copy (default: SLURM_CONF from scontrol show config)
#
# A command that fails (no slurmdbd, no permission for sshare, ...) is noted
# in the manifest with its exit status and the collection goes on; the
# script exits 2 only when sacct itself fails or the arguments are bad.
# docs/collect.md says what each piece is used for.
set -uo pipefail

die() { echo "collect-slurm-records: $*" >&2; exit 2; }

start="now-7days"
end="now"
out=""
cluster=""
conf=""
tar=0
while [ $# -gt 0 ]; do
	case "$1" in
	-S) [ $# -ge 2 ] || die "-S needs a value"; start="$2"; shift 2 ;;
	-E) [ $# -ge 2 ] || die "-E needs a value"; end="$2"; shift 2 ;;
	-o) [ $# -ge 2 ] || die "-o needs a value"; out="$2"; shift 2 ;;
	-M) [ $# -ge 2 ] || die "-M needs a value"; cluster="$2"; shift 2 ;;
	-c) [ $# -ge 2 ] || die "-c needs a value"; conf="$2"; shift 2 ;;
	--tar) tar=1; shift ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
command -v sacct >/dev/null 2>&1 || die "sacct not found: run this on a node with the Slurm client commands"
[ -n "$out" ] || out="./slurm-records-$(date +%Y%m%dT%H%M%S)"
[ -e "$out" ] && die "$out exists: give a new directory with -o"
tmp="$out.partial.$$"
mkdir -p "$tmp/conf" || die "cannot create $tmp"
trap 'rm -rf "$tmp"' EXIT

mflags=()
[ -n "$cluster" ] && mflags=(-M "$cluster")
status=()

# run NAME FILE CMD...: CMD's stdout to FILE, stderr to FILE.stderr (removed
# when empty); its exit status goes to the manifest.
run() {
	local name="$1" file="$2"
	shift 2
	"$@" >"$tmp/$file" 2>"$tmp/$file.stderr"
	local rc=$?
	[ -s "$tmp/$file.stderr" ] || rm -f "$tmp/$file.stderr"
	status+=("$rc	$name	$*")
	return $rc
}

# The fields schedsim's sacct reader and the bundle replay use, in this
# order; those this sacct does not know (older releases lack SubmitLine,
# newer ones dropped ReqGRES) are left out and listed in the manifest.
# SubmitLine comes last: sacct does not escape the delimiter inside it.
want=(JobID JobIDRaw JobName User Account Partition QOS State ExitCode
	Reason Priority Submit Eligible Start End Elapsed ElapsedRaw Timelimit
	TimelimitRaw ReqCPUS AllocCPUS NCPUS ReqNodes NNodes AllocNodes NodeList
	ReqMem ReqTRES AllocTRES ReqGRES AllocGRES Flags Reservation Constraints
	Restarts WorkDir SubmitLine)
known=" $(sacct --helpformat 2>/dev/null | tr -s ' \t' '\n\n' | tr '[:upper:]' '[:lower:]' | tr '\n' ' ') "
fields=()
missing=()
for f in "${want[@]}"; do
	l=$(printf '%s' "$f" | tr '[:upper:]' '[:lower:]')
	case "$known" in
	*" $l "*) fields+=("$f") ;;
	*) missing+=("$f") ;;
	esac
done
[ ${#fields[@]} -gt 0 ] || die "sacct --helpformat lists none of the fields schedsim reads"
flist=$(IFS=,; echo "${fields[*]}")

if ! run sacct sacct.txt sacct "${mflags[@]}" -a -X -D -P -S "$start" -E "$end" -o "$flist"; then
	cat "$tmp/sacct.txt.stderr" >&2 2>/dev/null
	die "sacct failed (is slurmdbd reachable, and may you use -a?)"
fi

run scontrol-config scontrol-config.txt scontrol show config
run nodes nodes.txt scontrol -o show node
run partitions partitions.txt scontrol -o show partition
run assoc assoc.txt sacctmgr "${mflags[@]}" -P -n show assoc \
	format=Cluster,Account,User,Partition,ParentName,Share,Priority,GrpTRES,MaxTRES,MaxJobs,MaxSubmit,MaxWall,QOS,DefaultQOS,Lft,Rgt,ID,ParentID
run qos qos.txt sacctmgr -P -n show qos \
	format=Name,Priority,Flags,Preempt,PreemptMode,GraceTime,UsageFactor,UsageThreshold,GrpTRES,MaxTRES,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxWall,MinTRES
run event event.txt sacctmgr "${mflags[@]}" -P -n show event all start="$start" end="$end" \
	format=Cluster,ClusterNodes,NodeName,TimeStart,TimeEnd,State,Reason,User,Duration
run reservation reservation.txt sacctmgr "${mflags[@]}" -P -n show reservation start="$start" end="$end" \
	format=Cluster,Name,NodeNames,TimeStart,TimeEnd,Flags
run sshare sshare.txt sshare -a -l -P
# sacctmgr's -n drops the header; put back the field names so each file
# says what its columns are.
hdr() { [ -f "$tmp/$1" ] && { printf '%s\n' "$2"; cat "$tmp/$1"; } >"$tmp/$1.h" && mv "$tmp/$1.h" "$tmp/$1"; }
hdr assoc.txt 'Cluster|Account|User|Partition|ParentName|Share|Priority|GrpTRES|MaxTRES|MaxJobs|MaxSubmit|MaxWall|QOS|DefaultQOS|Lft|Rgt|ID|ParentID'
hdr qos.txt 'Name|Priority|Flags|Preempt|PreemptMode|GraceTime|UsageFactor|UsageThreshold|GrpTRES|MaxTRES|MaxTRESPU|MaxJobsPU|MaxSubmitPU|MaxWall|MinTRES'
hdr event.txt 'Cluster|ClusterNodes|NodeName|TimeStart|TimeEnd|State|Reason|User|Duration'
hdr reservation.txt 'Cluster|Name|NodeName|TimeStart|TimeEnd|Flags'

# slurm.conf and what it includes, relative to its directory.
if [ -z "$conf" ]; then
	conf=$(sed -n 's/^SLURM_CONF[[:space:]]*=[[:space:]]*//p' "$tmp/scontrol-config.txt" 2>/dev/null | head -1)
	[ -n "$conf" ] || conf="${SLURM_CONF:-/etc/slurm/slurm.conf}"
fi
confdir=$(dirname "$conf")
copied=()
# copy FILE: into conf/ at its path relative to slurm.conf's directory (or
# its base name when outside it), once; then the files its Include lines name.
copy() {
	local f="$1" depth="$2" rel
	[ "$depth" -le 16 ] || { status+=("1	include	$f: Include nested deeper than 16"); return; }
	case " ${copied[*]-} " in *" $f "*) return ;; esac
	[ -r "$f" ] || { status+=("1	copy	$f: not readable"); return; }
	copied+=("$f")
	case "$f" in
	"$confdir"/*) rel="${f#"$confdir"/}" ;;
	*) rel="outside/$(basename "$f")" ;;
	esac
	mkdir -p "$tmp/conf/$(dirname "$rel")"
	cp "$f" "$tmp/conf/$rel"
	status+=("0	copy	$f -> conf/$rel")
	local inc
	while IFS= read -r inc; do
		case "$inc" in /*) ;; *) inc="$confdir/$inc" ;; esac
		local g
		for g in $inc; do copy "$g" $((depth + 1)); done
	done < <(sed -n 's/^[[:space:]]*[Ii][Nn][Cc][Ll][Uu][Dd][Ee][[:space:]]\{1,\}\([^#]*\).*/\1/p' "$f" | sed 's/[[:space:]]*$//')
}
copy "$conf" 0
for side in gres.conf topology.conf cgroup.conf; do
	[ -r "$confdir/$side" ] && copy "$confdir/$side" 0
done

# The manifest: enough to tell what the bundle holds and where it came from.
{
	echo "schedsim_records_bundle: 1"
	echo "collected: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "window_start: $start"
	echo "window_end: $end"
	echo "window_start_epoch: $(date -d "$start" +%s 2>/dev/null || echo unknown)"
	echo "window_end_epoch: $(date -d "$end" +%s 2>/dev/null || echo unknown)"
	echo "cluster: ${cluster:-$(sed -n 's/^ClusterName[[:space:]]*=[[:space:]]*//p' "$tmp/scontrol-config.txt" 2>/dev/null | head -1)}"
	echo "slurm_version: $(sacct --version 2>/dev/null)"
	echo "scontrol_version: $(scontrol --version 2>/dev/null)"
	echo "slurm_conf: $conf"
	echo "sacct_fields: $flist"
	echo "sacct_fields_missing: ${missing[*]-}"
	echo "sacct_rows: $(($(wc -l <"$tmp/sacct.txt") - 1))"
	echo "commands:"
	for s in "${status[@]}"; do printf '  %s\n' "$s"; done
	echo "files:"
	(cd "$tmp" && find . -type f ! -name manifest.txt | LC_ALL=C sort | while read -r f; do
		printf '  %s\t%s\t%s\n' "${f#./}" "$(wc -c <"$f" | tr -d ' ')" "$(sha256sum "$f" | cut -d' ' -f1)"
	done)
} >"$tmp/manifest.txt"

if [ "$tar" = 1 ]; then
	parent=$(dirname "$out")
	base=$(basename "$out")
	mv "$tmp" "$parent/$base" || die "cannot rename $tmp to $out"
	trap 'rm -rf "$parent/$base" "$out.tar.gz.partial"' EXIT
	tar -C "$parent" -czf "$out.tar.gz.partial" "$base" || die "tar failed"
	mv "$out.tar.gz.partial" "$out.tar.gz"
	echo "$out.tar.gz"
else
	mv "$tmp" "$out" || die "cannot rename $tmp to $out"
	trap - EXIT
	echo "$out"
fi
