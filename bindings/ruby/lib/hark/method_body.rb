# frozen_string_literal: true

module Hark
  # What a Ruby method does, read from its definition: the source text at the method's
  # source_location, parsed with Ruby's own parser (Ripper, a documented part of the
  # standard library), never its bytecode (RubyVM::InstructionSequence, which Ruby
  # says may change in any version).
  #
  # Only a few bodies are recognised, each a single expression with nothing around it:
  #
  #   def start(name, id, payload); end        Body(:empty)
  #   def silenced?(_name) = true              Body(:literal, value: true) (also false, nil)
  #   def logger = QUIET_LOGGER                Body(:constant, path: ["QUIET_LOGGER"])
  #   def logger; ActiveRecord::Base.logger; end
  #                                            Body(:reader, path: ["ActiveRecord", "Base"],
  #                                                 reader: :logger)
  #   define_method(:logger) { QUIET_LOGGER }  the same for a block (block: true)
  #
  # The definition must be the method Ruby runs: a `def` (or `define_method` with a
  # block) of the method's own name at exactly its source_location line, the only one
  # there, whose parameters have the kinds and names Method#parameters reports, in a
  # file that can still be read and parsed. Anything else (a method defined from a
  # string that names another line, an attr_reader, a C method, a file gone or changed
  # into something else at that line) answers nil: "not known", which every caller
  # treats as "ask Ruby every time".
  module MethodBody
    Body = Struct.new(:kind, :value, :path, :top, :reader, :block, keyword_init: true)

    # A file larger than this is not read (a method worth caching is not defined there).
    MAX_FILE = 2 * 1024 * 1024

    @files = {} # path => [mtime, size, index]; index: [line, name] => Body, :unknown or :ambiguous
    @mutex = Mutex.new

    class << self
      # The Body of Method or UnboundMethod `m`, or nil.
      def of(m)
        path, line = m.source_location
        return nil unless path.is_a?(String) && line.is_a?(Integer)
        entry = index(path)&.[]([line, m.original_name.to_s])
        return nil unless entry.is_a?(Array)
        body, params = entry
        params == parameters(m) ? body : nil
      rescue StandardError
        nil
      end

      private

      # The definitions of `path` by [line, name], parsed again when the file changes.
      def index(path)
        stat = File.stat(path)
        return nil unless stat.file? && stat.size <= MAX_FILE
        stamp = [stat.mtime, stat.size]
        cached = @mutex.synchronize { @files[path] }
        return cached[1] if cached && cached[0] == stamp
        # (A file Ripper cannot parse gives an empty index; an exception, nothing kept.)
        index = build_index(File.binread(path))
        @mutex.synchronize { @files[path] = [stamp, index] }
        index
      rescue SystemCallError, IOError
        nil
      end

      def build_index(source)
        load_parser
        tree = Ripper.sexp(source)
        index = {}
        walk(tree, index) if tree
        index
      end

      # Ripper defines a few hundred methods as it loads, which hark's method hooks would
      # all hear (one of them, Ripper#error?, a name hark watches): none of them can
      # change an answer hark caches, so they are loaded with the hooks quiet.
      def load_parser
        return if defined?(::Ripper::SexpBuilderPP)
        Silence.quietly { require "ripper/sexp" }
      end

      def walk(node, index)
        return unless node.is_a?(Array)
        case node[0]
        when :def then add(index, node[1], node[2], body_of_def(node[3]))
        when :defs then add(index, node[3], node[4], body_of_def(node[5]))
        when :method_add_block then add_block(index, node[1], node[2])
        end
        node.each { |child| walk(child, index) }
      end

      def add(index, name_token, params, body)
        return unless name_token.is_a?(Array) && name_token[0].to_s.start_with?("@")
        line = name_token[2]&.first
        return unless line
        key = [line, name_token[1]]
        if index.key?(key)
          index[key] = :ambiguous
        else
          index[key] = body ? [body, ripper_parameters(params)] : :unknown
        end
      end

      # define_method(:name) { ... } / define_method :name do ... end, on self or on
      # a receiver, with the name as a literal Symbol.
      def add_block(index, call, block)
        name = define_method_name(call)
        return unless name
        block_var, body =
          case block[0]
          when :brace_block then [block[1], statements(block[2])]
          when :do_block then [block[1], body_of_def(block[2], statements_only: true)]
          else return
          end
        params = block_var.is_a?(Array) && block_var[0] == :block_var ? block_var[1] : nil
        body = classify(body)
        body&.block = true
        add(index, name, params, body)
      end

      def define_method_name(call)
        call = call[1] if call[0] == :method_add_arg && (args = call[2])
        args ||= call.last if call[0] == :command || call[0] == :command_call
        ident =
          case call[0]
          when :fcall, :command then call[1]
          when :call, :command_call then call[3]
          end
        return nil unless ident.is_a?(Array) && %w[define_method define_singleton_method].include?(ident[1])
        args = args[1] if args.is_a?(Array) && args[0] == :arg_paren
        return nil unless args.is_a?(Array) && args[0] == :args_add_block && args[1].is_a?(Array) && args[1].size == 1
        sym = args[1][0]
        return nil unless sym.is_a?(Array) && sym[0] == :symbol_literal && sym[1].is_a?(Array) && sym[1][0] == :symbol
        token = sym[1][1]
        # The name's position is where the block's line is looked for.
        [token[0], token[1], ident[2]]
      end

      # A def's body: [:bodystmt, statements, rescue, else, ensure] (an endless def has a
      # single expression where the statement list would be).
      def body_of_def(bodystmt, statements_only: false)
        return nil unless bodystmt.is_a?(Array) && bodystmt[0] == :bodystmt
        return nil unless bodystmt[2].nil? && bodystmt[3].nil? && bodystmt[4].nil?
        stmts = bodystmt[1]
        stmts = [stmts] if stmts.is_a?(Array) && stmts[0].is_a?(Symbol)
        statements_only ? statements(stmts) : classify(statements(stmts))
      end

      def statements(list)
        return nil unless list.is_a?(Array)
        list.reject { |s| s == [:void_stmt] }
      end

      def classify(stmts)
        return nil unless stmts
        return Body.new(kind: :empty) if stmts.empty?
        return nil unless stmts.size == 1
        expression(stmts[0])
      end

      LITERALS = { "true" => true, "false" => false, "nil" => nil }.freeze

      def expression(node)
        if node[0] == :var_ref && node[1][0] == :@kw && LITERALS.key?(node[1][1])
          return Body.new(kind: :literal, value: LITERALS[node[1][1]])
        end
        if (path = constant_path(node))
          return Body.new(kind: :constant, path: path[0], top: path[1])
        end
        node = node[1] if node[0] == :method_add_arg && node[2] == [:arg_paren, nil]
        return nil unless node[0] == :call && period?(node[2]) && node[3].is_a?(Array) && node[3][0] == :@ident
        return nil unless (path = constant_path(node[1]))
        Body.new(kind: :reader, path: path[0], top: path[1], reader: node[3][1].to_sym)
      end

      def period?(token)
        token.is_a?(Array) && token[0] == :@period && token[1] == "."
      end

      # [["A", "B"], top] for A::B (top: ::A::B), or nil.
      def constant_path(node)
        case node[0]
        when :var_ref then node[1][0] == :@const ? [[node[1][1]], false] : nil
        when :top_const_ref then [[node[1][1]], true]
        when :const_path_ref
          left = constant_path(node[1])
          left && node[2][0] == :@const ? [left[0] + [node[2][1]], left[1]] : nil
        end
      end

      # The parameters as Method#parameters lists them ([kind, name]); nil names match
      # anything (Ruby leaves anonymous ones unnamed or names them *, ** and &).
      def ripper_parameters(params)
        params = params[1] if params.is_a?(Array) && params[0] == :paren
        return [] if params.nil?
        return :unknown unless params[0] == :params
        _, req, opt, rest, post, kw, kwrest, block = params
        list = []
        (req || []).each { |p| list << [:req, ident(p)] }
        (opt || []).each { |p| list << [:opt, ident(p[0])] }
        list << [:rest, rest[1] && ident(rest[1])] if rest.is_a?(Array) && rest[0] == :rest_param
        (post || []).each { |p| list << [:req, ident(p)] }
        (kw || []).each { |label, default| list << [default ? :key : :keyreq, label[1].delete_suffix(":")] }
        case kwrest
        when Array
          return :unknown unless kwrest[0] == :kwrest_param
          list << [:keyrest, kwrest[1] && ident(kwrest[1])]
        when nil then nil
        else return :unknown
        end
        list << [:block, block[1] && ident(block[1])] if block.is_a?(Array) && block[0] == :blockarg
        return :unknown if list.any? { |_, name| name == :unknown }
        list
      end

      def ident(token)
        token.is_a?(Array) && token[0] == :@ident ? token[1] : :unknown
      end

      # Method#parameters in the same form.
      def parameters(m)
        m.parameters.map { |kind, name| [kind, name.nil? || %i[* ** &].include?(name) ? nil : name.to_s] }
      end
    end
  end
end
