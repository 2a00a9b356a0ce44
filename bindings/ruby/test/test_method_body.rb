# frozen_string_literal: true

# Hark::MethodBody reads what a method does from its definition (Ripper on the source at
# its source_location), never from bytecode: the few bodies hark can cache, and nil for
# everything else, including a definition that is not the method Ruby runs.
require "minitest/autorun"
require "hark"
require "tmpdir"
require "open3"
require "rbconfig"

class TestMethodBody < Minitest::Test
  QUIET = Object.new

  module Path
    class Holder
      def self.logger = QUIET
    end
  end

  class Shapes
    def start(name, id, payload); end

    def finish(_name, _id, _payload)
      nil
    end

    def silenced?(_name) = true

    def loud?(_name)
      false
    end

    def logger = QUIET

    def top_logger
      ::TestMethodBody::QUIET
    end

    def reader = Path::Holder.logger

    def reader_with_parens
      Path::Holder.logger()
    end

    def computed = @logger || QUIET

    def with_rescue
      QUIET
    rescue StandardError
      nil
    end

    def two_statements
      QUIET
      QUIET
    end

    def self.class_level = nil

    define_method(:block_logger) { QUIET }
    define_method(:block_start) { |*| }

    attr_reader :attr

    def one(a); end; def one_more(a, b); end # two definitions on one line, each found
  end

  def body(name, obj = Shapes.new)
    Hark::MethodBody.of(obj.method(name))
  end

  def test_the_bodies_hark_can_cache
    assert_equal :empty, body(:start).kind
    assert_equal [:literal, nil], [body(:finish).kind, body(:finish).value]
    assert_equal [:literal, true], [body(:silenced?).kind, body(:silenced?).value]
    assert_equal [:literal, false], [body(:loud?).kind, body(:loud?).value]
    assert_equal [:constant, ["QUIET"], false], [body(:logger).kind, body(:logger).path, body(:logger).top]
    assert_equal [:constant, %w[TestMethodBody QUIET], true], [body(:top_logger).kind, body(:top_logger).path, body(:top_logger).top]
    assert_equal [:reader, %w[Path Holder], :logger], [body(:reader).kind, body(:reader).path, body(:reader).reader]
    assert_equal :reader, body(:reader_with_parens).kind
    assert_equal [:literal, nil], [body(:class_level, Shapes).kind, body(:class_level, Shapes).value]
    assert_equal :empty, body(:one).kind
    assert_equal :empty, body(:one_more).kind
  end

  def test_blocks_are_read_too_and_say_so
    assert_equal [:constant, true], [body(:block_logger).kind, body(:block_logger).block]
    assert_equal [:empty, true], [body(:block_start).kind, body(:block_start).block]
    refute body(:start).block
  end

  def test_anything_else_is_not_known
    %i[computed with_rescue two_statements attr].each { |name| assert_nil body(name), name.to_s }
    assert_nil Hark::MethodBody.of(1.method(:+)), "a C method"
    assert_nil Hark::MethodBody.of(eval("Object.new.tap { |o| def o.x = 1 }").method(:x)), "no file to read"
  end

  # A method compiled from a string that names a line of this file is known only when
  # the definition at that line is its own: same name and same parameters.
  def test_a_definition_that_is_not_the_methods_own_is_not_taken
    line = Shapes.instance_method(:logger).source_location.last
    klass = Class.new
    klass.class_eval("def logger(level = nil) = level", __FILE__, line)
    assert_nil Hark::MethodBody.of(klass.instance_method(:logger)), "other parameters"
    klass.class_eval("def other = 1", __FILE__, line)
    assert_nil Hark::MethodBody.of(klass.instance_method(:other)), "other name"
  end

  # The file is read again when it changes (a reloaded file defines its methods again).
  def test_a_changed_file_is_read_again
    Dir.mktmpdir("hark-body") do |dir|
      file = File.join(dir, "sub.rb")
      File.write(file, "class HarkBodyReload\n  def logger = nil\nend\n")
      load file
      assert_equal :literal, Hark::MethodBody.of(HarkBodyReload.instance_method(:logger)).kind
      File.write(file, "class HarkBodyReload\n  def logger = @logger\n\n\nend\n") # another size
      load file
      assert_nil Hark::MethodBody.of(HarkBodyReload.instance_method(:logger))
    end
  end

  # Ruby's parser is loaded the first time a definition is read, with hark's method hooks
  # quiet: the methods it defines (Ripper#error? among them, a name hark watches) change
  # no cached answer, and re-asking in the middle of loading it would read definitions
  # with a parser not loaded yet.
  def test_the_parser_is_loaded_when_first_needed_and_quietly
    script = <<~RUBY
      require "hark"
      abort "loaded early" if defined?(Ripper)
      changes = 0
      Hark::Silence.singleton_class.prepend(Module.new { define_method(:changed!) { changes += 1; super() } })
      quiet = Class.new { def start(*) = nil; def finish(*) = nil; def silenced?(_name) = true }
      changes = 0 # (defining silenced? above was a change)
      sub = Hark::Fanout.new.subscribe("first", quiet.new)
      puts [defined?(Ripper::SexpBuilderPP) ? "loaded" : "not loaded", changes, sub.silence_mode, sub.hark_why.inspect].join(" ")
    RUBY
    out, err, status = Dir.mktmpdir("hark-parser") do |dir|
      File.write(file = File.join(dir, "first.rb"), script) # a file: definitions are read from it
      Open3.capture3(RbConfig.ruby, *$LOAD_PATH.flat_map { |d| ["-I", d] }, file)
    end
    assert status.success?, err
    assert_equal "loaded 0 #{Hark::Fanout::SILENCE_CACHED} nil", out.strip
  end
end
