#!/bin/sh
# Run by td-lab.service in the systemd guest of tests/vm/systemd.sh, as
# root, from the run's read-only disk at /lab: the project's .deb installed
# with dpkg, the agent installed as a service with `topdown
# install-service` and driven with systemctl (a SIGKILL restarts it, a stop
# stores the partial window), its log read back with journalctl, then
# `topdown uninstall-service`. Each check prints one line
#   TD-RESULT NAME ok|fail DETAIL
# then "TD-RESULT done", and the guest powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unit=topdown-agent.service
state=/var/lib/topdown
db=$state/runs.db # the agent's database when install-service is given no store

result() { echo "TD-RESULT $*"; }
finish() {
	result done
	systemctl poweroff --no-block
	exit 0
}
prop() { systemctl show -p "$1" --value $unit; }
runs() { topdown list --db $db --limit 100000 --json 2>/dev/null | grep -c '"run_id"'; }
partial_runs() { topdown list --db $db --limit 100000 --json 2>/dev/null | grep -c '"partial": true'; }
# The unit's status and last log lines, on one line, for a failure's detail.
unit_state() {
	echo "$(prop ActiveState)/$(prop SubState), $(prop NRestarts) restarts:" \
		"$(journalctl -u $unit -n 4 --no-pager -o cat 2>/dev/null | tr '\n' ' ' | head -c 400)"
}
# Waits up to $1 seconds of the guest's clock for the command after it to succeed.
wait_for() {
	deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt $deadline ] || return 1
		sleep 1
	done
}
more_runs_than() { [ "$(runs)" -gt "$1" ]; }
restarted() { [ "$(prop NRestarts)" -ge 1 ] && [ "$(prop ActiveState)" = active ]; }
# Two windows stored, or the unit gave up or restarted: no need to wait on.
two_windows_or_failed() {
	more_runs_than 1 || [ "$(prop NRestarts)" -gt 0 ] || [ "$(prop ActiveState)" = failed ]
}

result kernel ok "$(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')"

if dpkg -i /lab/topdown.deb >/tmp/dpkg.log 2>&1 && [ "$(topdown version)" ]; then
	result dpkg_install ok "$(topdown version) at $(command -v topdown)"
else
	result dpkg_install fail "$(tail -3 /tmp/dpkg.log | tr '\n' ' ')"
	finish
fi

# The workload: its main thread and one I/O thread, for longer than the checks.
/lab/td-workload --duration-ms 3600000 --io-threads 1 >/dev/null 2>&1 &

# Windows of 4 s, counted whole: a stop always lands in one.
if topdown install-service --process td-workload --every 4s --label lab=systemd >/tmp/install.log 2>&1 &&
	[ "$(systemctl is-enabled $unit 2>/dev/null)" = enabled ] && systemctl start $unit; then
	result install_service ok "$(prop FragmentPath) enabled and started"
else
	result install_service fail "$(tr '\n' ' ' </tmp/install.log | head -c 300) $(unit_state)"
	finish
fi

# Windows stored under the hardened unit: its capabilities and sandbox
# suffice, and its runs carry the label of the settings file.
labelled() { topdown list --db $db --label lab=systemd --limit 100000 --json 2>/dev/null | grep -c '"run_id"'; }
if wait_for 300 two_windows_or_failed && [ "$(labelled)" -ge 2 ] && [ "$(prop NRestarts)" = 0 ]; then
	pid=$(prop MainPID)
	result hardened_windows ok "$(labelled) windows labelled lab=systemd in $db; CapEff $(sed -n 's/^CapEff:\t//p' /proc/"$pid"/status)," \
		"kernel.perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)"
else
	result hardened_windows fail "$(runs) windows, kernel.perf_event_paranoid" \
		"$(cat /proc/sys/kernel/perf_event_paranoid): $(unit_state)"
	finish
fi

# SIGKILL: Restart=on-failure starts it again (after RestartSec=10s), and it stores windows again.
before=$(runs)
old_pid=$(prop MainPID)
systemctl kill -s KILL $unit
if wait_for 120 restarted && [ "$(prop MainPID)" != "$old_pid" ] && wait_for 300 more_runs_than "$before"; then
	result kill_restart ok "NRestarts=$(prop NRestarts), pid $old_pid then $(prop MainPID), $(runs) windows"
else
	result kill_restart fail "pid $old_pid then $(prop MainPID), $(runs) windows (was $before): $(unit_state)"
fi

# stop: SIGTERM in the middle of a window, which the agent stores marked
# partial: one partial run more, and it is the newest. (A window may end
# between reading the count and the stop: the count alone cannot say.)
wait_for 120 more_runs_than "$(runs)"
sleep 1
before=$(runs)
partial_before=$(partial_runs)
systemctl stop $unit
newest_partial=$(topdown list --db $db --limit 1 --json 2>/dev/null | grep -c '"partial": true')
if [ "$(partial_runs)" -eq $((partial_before + 1)) ] && [ "$newest_partial" -eq 1 ] &&
	[ "$(prop Result)" = success ]; then
	result stop_partial ok "$before windows, $(runs) after the stop, the newest marked partial; Result=success"
else
	result stop_partial fail "$before windows and $partial_before partial, then $(runs) and $(partial_runs): $(unit_state)"
fi

# The journal: systemd's lines and the agent's own (stderr), from both starts.
journalctl -u $unit --no-pager -o cat >/tmp/journal.txt 2>&1
announced=$(grep -c 'topdown agent: following' /tmp/journal.txt)
stopped=$(grep -c 'topdown agent: stopped after' /tmp/journal.txt)
if [ "$announced" -eq 2 ] && [ "$stopped" -eq 1 ]; then
	result journal ok "$(grep -c 'topdown agent:' /tmp/journal.txt) agent lines: $announced starts, '$(grep -m1 'topdown agent: stopped' /tmp/journal.txt | cut -c 22-)'"
else
	result journal fail "$announced starts and $stopped stops logged: $(head -c 400 /tmp/journal.txt | tr '\n' ' ')"
fi

# uninstall-service: no unit, no settings, nothing enabled or running;
# the state directory and its runs kept, as the README says.
topdown uninstall-service >/tmp/uninstall.log 2>&1
rc=$?
left=""
for path in /etc/systemd/system/$unit /etc/systemd/system/multi-user.target.wants/$unit \
	/etc/topdown/agent.env /etc/topdown; do
	[ -e "$path" ] && left="$left $path"
done
load=$(prop LoadState)
for cmdline in /proc/[0-9]*/cmdline; do # minbase has no pgrep
	case $(tr '\0' ' ' <"$cmdline" 2>/dev/null) in
	*topdown\ agent\ *) left="$left a running agent" ;;
	esac
done
if [ $rc -eq 0 ] && [ -z "$left" ] && [ "$load" = not-found ] && [ -s $db ]; then
	result uninstall_service ok "unit and settings removed, LoadState=$load; $state kept with $(runs) runs"
else
	result uninstall_service fail "exit $rc, left:${left:- nothing}, LoadState=$load, $db $(ls -l $db 2>&1): $(tr '\n' ' ' </tmp/uninstall.log)"
fi
finish
