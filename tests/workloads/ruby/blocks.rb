# blocks.rb: Ruby called back from C: a block yielded by Integer#times, one
# by Array#each, and sort_by's block, each burning CPU in weigh.
#   <main> <- times_caller <- Integer#times <- block in times_caller <- weigh
#   <main> <- each_caller <- Array#each <- block in each_caller <- weigh
#   <main> <- sorter <- sort_by <- each <- block in sorter <- weigh
#   ruby blocks.rb SECONDS
def weigh(v)
  x = 0
  i = 0
  while i < 300
    x += i * v
    i += 1
  end
  x
end

def times_caller
  s = 0
  200.times { |i| s += weigh(i) }
  s
end

def each_caller
  s = 0
  [3, 1, 4, 1, 5, 9, 2, 6].each { |v| 25.times { s += weigh(v) } }
  s
end

def sorter
  a = Array.new(200) { |i| (i * 7919) % 1000 }
  a.sort_by { |v| weigh(v) }.first
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || 30).to_f
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
  times_caller
  each_caller
  sorter
end
