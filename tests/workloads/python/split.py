# SPDX-License-Identifier: Apache-2.0
# split.py: CPU time split 60/30/10 over three call chains, for profile
# share tests.  Each round spends 60, 30 and 10 ms of CPU in
#   heavy  <- chain_60 <- run <- <module>
#   medium <- chain_30 <- run <- <module>
#   light  <- chain_10 <- run <- <module>
# measured with the thread's CPU clock, so the split holds on a busy host.
#
#   python split.py [SECONDS]
import sys, time

def spin(ms):
    end = time.thread_time() + ms / 1000.0
    x = 0
    while time.thread_time() < end:
        for i in range(500):
            x += i * i
    return x

def heavy(): return spin(60)

def medium(): return spin(30)

def light(): return spin(10)

def chain_60(): return heavy()

def chain_30(): return medium()

def chain_10(): return light()

def run(seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        chain_60()
        chain_30()
        chain_10()

if __name__ == "__main__":
    run(float(sys.argv[1]) if len(sys.argv) > 1 else 30)
