# sleeper.rb: a known stack, asleep, for the userland check of offsets:
#   <main> (14) <- outer (13) <- Sleeper.start (10) <- Sleeper#nap (8) <- sleep
# (nap's sleep is past its 54th instruction word: the line table's
# succinct index is read beyond its immediate part)
class Sleeper
  def nap(s)
    t = 0; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1; t += 1
    sleep(s + t - 30)
  end
  def self.start(s) = new.nap(s)
end

def outer(s) = Sleeper.start(s)
outer((ARGV[0] || 30).to_f)
