# sleeper.rb: a known stack, asleep, for the userland check of offsets:
#   <main> (9) <- outer (8) <- Sleeper.start (5) <- Sleeper#nap (4) <- sleep
class Sleeper
  def nap(s) = sleep(s)
  def self.start(s) = new.nap(s)
end

def outer(s) = Sleeper.start(s)
outer((ARGV[0] || 30).to_f)
