# threads.rb: Ruby threads (native threads taking turns on the VM lock),
# each with its own execution context (the thread-local ruby_current_ec),
# burning in methods of its own:
#   thread a:    worker_a <- burn_a <- spin
#   thread b:    worker_b <- burn_b <- spin
#   main thread: main_loop <- burn_main <- spin
#   ruby threads.rb SECONDS
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def spin
  x = 0
  i = 0
  while i < 20_000
    x += i * i
    i += 1
  end
  x
end

def burn_a = spin
def burn_b = spin
def burn_main = spin
def worker_a(deadline) = (burn_a while now < deadline)
def worker_b(deadline) = (burn_b while now < deadline)
def main_loop(deadline) = (burn_main while now < deadline)

deadline = now + (ARGV[0] || 30).to_f
threads = [Thread.new { worker_a(deadline) }, Thread.new { worker_b(deadline) }]
main_loop(deadline)
threads.each(&:join)
