# split.rb: CPU time split 60/30/10 over three method chains, in rounds
# of 20 ms of the thread's CPU clock (the split holds on a busy host, and
# a profile of a few CPU seconds holds many rounds); a recursive chain.
#   Burner#heavy  <- chain_60 <- run <- <main>
#   Burner#medium <- chain_30 <- run <- <main>
#   Burner#light  <- rec (x3) <- chain_10 <- run <- <main>
#   ruby split.rb SECONDS
class Burner
  def cpu
    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  end

  def spin(s)
    stop = cpu + s
    x = 0
    while cpu < stop
      i = 0
      while i < 2000
        x += i * i
        i += 1
      end
    end
    x
  end

  def heavy = spin(0.012)
  def medium = spin(0.006)
  def light = spin(0.002)
end

def chain_60(b) = b.heavy
def chain_30(b) = b.medium
def rec(b, n) = n.zero? ? b.light : rec(b, n - 1)
def chain_10(b) = rec(b, 2)

def run(seconds)
  b = Burner.new
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
  while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    chain_60(b)
    chain_30(b)
    chain_10(b)
  end
end

run((ARGV[0] || 30).to_f)
