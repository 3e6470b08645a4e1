# sleeper.rb: a known stack, asleep, for the userland check of offsets:
#   <main> (8) <- outer (7) <- Sleeper#nap (4) <- Kernel#sleep
class Sleeper
  def nap(s) = sleep(s)
end

def outer(s) = Sleeper.new.nap(s)
outer((ARGV[0] || 30).to_f)
