//===- TextCheck.cpp - reject TTIR text that MLIR 19's parser cannot survive -===//
//
// MLIR's parser recurses once per nesting level and per affine operator, so deep input
// overflows the stack; and it resolves a forward reference `%v` by whatever `%v` it
// defines next in the text, even inside another region, which leaves an operand pointing
// into a region that is freed when the parse later fails (heap corruption), or an op using
// a value defined inside its own region (a crash in OperandStorage). Neither can be fixed
// in Debian's libMLIR, so this scan runs over the text first, in microseconds, and
// rejects such input with one located error. docs/reliability.md ("Untrusted TTIR")
// gives the design and its measured cost.
//
// The SSA part mirrors MLIR's own name resolution (mlir/lib/AsmParser/Parser.cpp): one
// name table with a nested scope per region (none of the registered ops asks for an
// isolated name scope, so tt.func bodies are nested scopes too); a name that is not
// visible at a use becomes a forward reference, resolved by its next definition in the
// text; results are defined after their op (regions included), region arguments when
// their region opens, block arguments one by one as their label is read. Only a resolution
// whose definition lies in a region that does not enclose every use is rejected; that is
// never valid IR, as MLIR requires a value's region to enclose its uses. What it lets
// through binds only within enclosing regions, and MLIR drops a region's uses before it
// frees the region's definitions, so a later parse failure leaves nothing dangling.
//
//===----------------------------------------------------------------------===//

#include "ttinterp/frontend/Frontend.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <string>
#include <vector>

namespace ttinterp::frontend {

namespace {

using llvm::StringRef;

std::string tooManyAffineOperators() {
  // MLIR parses each operator of an affine expression one stack frame deeper.
  return "affine expression with more than " + std::to_string(kMaxAffineOperators) +
         " operators";
}

bool isIdChar(char c) { return llvm::isAlnum(c) || c == '$' || c == '.' || c == '_' || c == '-'; }

/// The end of the suffix-id starting at `i` (MLIR: digits, or [a-zA-Z$._-] then
/// [a-zA-Z0-9$._-]*); `i` itself when there is none.
size_t suffixIdEnd(StringRef text, size_t i) {
  size_t n = text.size();
  if (i < n && llvm::isDigit(text[i])) {
    while (i < n && llvm::isDigit(text[i]))
      ++i;
    return i;
  }
  if (i < n && (llvm::isAlpha(text[i]) || text[i] == '$' || text[i] == '.' || text[i] == '_' ||
                text[i] == '-')) {
    while (i < n && isIdChar(text[i]))
      ++i;
  }
  return i;
}

class TextChecker {
public:
  TextChecker(StringRef text, StringRef bufferName) : text(text), bufferName(bufferName) {}

  bool run(std::string &error);

private:
  /// One open bracket: ( [ { <. A brace opens a scope (a region, or an attribute
  /// dictionary, which never holds SSA names and so never matters).
  struct Frame {
    char open;
    /// For '(' right after a block name: a label's arguments (definitions, as MLIR adds
    /// each one as soon as it is parsed) or a branch's operands (uses).
    enum class Caret { None, Label, Successor } caret = Caret::None;
    /// For '{': its scope.
    int scope = -1;
  };

  /// What a name currently stands for in the table (MLIR keeps one entry per name).
  struct Entry {
    bool forward = false;
    /// Definition: its scope. Forward reference: the innermost scope enclosing every use.
    int scope = 0;
    size_t pos = 0;
    /// Forward reference: its first use, and the use that last widened `scope`.
    int firstUseScope = 0;
    size_t widestUsePos = 0;
  };

  struct Name {
    StringRef name;
    size_t pos;
  };

  // Lexing helpers.
  size_t skipSpace(size_t i) const;
  size_t nameEnd(size_t i) const { return suffixIdEnd(text, i + 1); }

  // Scopes.
  int currentScope() const;
  bool encloses(int outer, int inner) const;
  int commonAncestor(int a, int b) const;
  void openScope();
  bool closeScope(int scope);

  // SSA names.
  bool use(StringRef name, size_t pos);
  bool define(StringRef name, size_t pos, int scope);
  bool commitResults(int scope);
  bool onPercent(size_t pos, size_t end);
  bool applyRegionArguments();

  bool onCaret(size_t pos, size_t &end);
  bool step(size_t i, size_t &end);

  // Nesting.
  bool pushFrame(Frame frame, size_t pos);
  void popFrameFor(char close);
  bool onAlias(size_t pos, size_t &end);
  void finishAliasDefinition();

  bool fail(size_t pos, const std::string &message);
  std::string lineCol(size_t pos) const;

  StringRef text;
  StringRef bufferName;
  std::string message;

  std::vector<Frame> frames;
  /// The token before the current one (spaces and comments skipped).
  StringRef previousToken;
  /// Every scope ever opened: its parent and depth (scope 0 is the top level).
  std::vector<int> scopeParent{-1};
  std::vector<int> scopeDepth{0};
  /// Names defined in each open scope (parallel to the open scopes, innermost last).
  std::vector<int> openScopes{0};
  std::vector<std::vector<StringRef>> openScopeDefs{{}};

  llvm::DenseMap<StringRef, Entry> names;

  /// Results of the last op of an open scope, defined once that op is over (at the next
  /// result list or block label of the scope, or when the scope closes).
  std::vector<std::pair<int, Name>> pendingResults;
  /// Region arguments (`%x: type` in parentheses, `%x = %init`), defined in the next
  /// region of their op: the next brace opened directly in `argumentsOwner` that turns out
  /// to hold SSA names.
  std::vector<Name> pendingArguments;
  int argumentsOwner = -1;
  int argumentsCandidate = -1;

  /// A run of `%a, %b, ... =` found by looking ahead, so that a long operand list is
  /// classified once.
  enum class ListKind { Uses, Results, Assignment };
  size_t listEnd = 0;
  ListKind listKind = ListKind::Uses;
  size_t listLast = 0;
  bool listLastTyped = false;

  /// Attribute and type aliases: the nesting their definition adds where they are used.
  /// A definition `#name = VALUE` runs to the next top-level thing that cannot belong to
  /// an attribute or type: another alias, or a `{`, `%`, `"` or `^` at the top level once
  /// VALUE has begun (so `#a = dense<1>` with its `: tensor<...>` on the next line counts
  /// as one; at worst an op header is counted with it, which only overestimates).
  llvm::DenseMap<StringRef, unsigned> aliasDepth;
  llvm::DenseMap<StringRef, std::pair<unsigned, size_t>> forwardAliasUses;
  StringRef definingAlias;
  unsigned definingAliasDepth = 0;
  bool aliasValueBegun = false;

  /// Inside affine_map<...> / affine_set<...>: the frame depth and operator count.
  size_t affineFrames = 0;
  unsigned affineOperators = 0;
};

size_t TextChecker::skipSpace(size_t i) const {
  size_t n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
    } else {
      break;
    }
  }
  return i;
}

std::string TextChecker::lineCol(size_t pos) const {
  StringRef before = text.take_front(pos);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t col = lineStart == StringRef::npos ? pos + 1 : pos - lineStart;
  return std::to_string(line) + ":" + std::to_string(col);
}

bool TextChecker::fail(size_t pos, const std::string &what) {
  message = (bufferName + ":" + lineCol(pos) + ": error: " + what).str();
  return false;
}

int TextChecker::currentScope() const { return openScopes.back(); }

bool TextChecker::encloses(int outer, int inner) const {
  while (scopeDepth[inner] > scopeDepth[outer])
    inner = scopeParent[inner];
  return inner == outer;
}

int TextChecker::commonAncestor(int a, int b) const {
  while (scopeDepth[a] > scopeDepth[b])
    a = scopeParent[a];
  while (scopeDepth[b] > scopeDepth[a])
    b = scopeParent[b];
  while (a != b) {
    a = scopeParent[a];
    b = scopeParent[b];
  }
  return a;
}

void TextChecker::openScope() {
  int parent = currentScope();
  int scope = static_cast<int>(scopeParent.size());
  scopeParent.push_back(parent);
  scopeDepth.push_back(scopeDepth[parent] + 1);
  openScopes.push_back(scope);
  openScopeDefs.emplace_back();
  if (!pendingArguments.empty() && argumentsOwner == parent && argumentsCandidate < 0)
    argumentsCandidate = scope;
  frames.back().scope = scope;
}

bool TextChecker::closeScope(int scope) {
  if (!commitResults(scope))
    return false;
  // Unlike `frames`, a scope is only closed by its own brace, so it is innermost here.
  for (StringRef name : openScopeDefs.back()) {
    auto it = names.find(name);
    if (it != names.end() && !it->second.forward && it->second.scope == scope)
      names.erase(it);
  }
  openScopes.pop_back();
  openScopeDefs.pop_back();
  if (argumentsCandidate == scope)
    argumentsCandidate = -1;
  if (argumentsOwner == scope) {
    pendingArguments.clear();
    argumentsOwner = -1;
  }
  return true;
}

bool TextChecker::use(StringRef name, size_t pos) {
  int scope = currentScope();
  auto [it, inserted] = names.try_emplace(name);
  Entry &entry = it->second;
  if (inserted) {
    entry.forward = true;
    entry.scope = scope;
    entry.pos = pos;
    entry.firstUseScope = scope;
    entry.widestUsePos = pos;
    return true;
  }
  if (entry.forward) {
    int common = commonAncestor(entry.scope, scope);
    if (common != entry.scope) {
      entry.scope = common;
      entry.widestUsePos = pos;
    }
  }
  return true;
}

bool TextChecker::define(StringRef name, size_t pos, int scope) {
  auto [it, inserted] = names.try_emplace(name);
  Entry &entry = it->second;
  if (!inserted) {
    // A redefinition is MLIR's to report.
    if (!entry.forward)
      return true;
    if (!encloses(scope, entry.scope)) {
      size_t usePos = encloses(scope, entry.firstUseScope) ? entry.widestUsePos : entry.pos;
      return fail(usePos, "'" + name.str() + "' is used here but defined at " + lineCol(pos) +
                              ", in a region that does not enclose this use");
    }
  }
  entry = Entry();
  entry.scope = scope;
  entry.pos = pos;
  for (size_t i = openScopes.size(); i-- > 0;) {
    if (openScopes[i] == scope) {
      openScopeDefs[i].push_back(name);
      break;
    }
  }
  return true;
}

bool TextChecker::commitResults(int scope) {
  while (!pendingResults.empty() && pendingResults.back().first == scope) {
    // Define in text order: take the first pending result of this scope.
    size_t first = pendingResults.size() - 1;
    while (first > 0 && pendingResults[first - 1].first == scope)
      --first;
    std::vector<std::pair<int, Name>> batch(pendingResults.begin() + first, pendingResults.end());
    pendingResults.resize(first);
    for (auto &[s, result] : batch)
      if (!define(result.name, result.pos, s))
        return false;
  }
  return true;
}

bool TextChecker::applyRegionArguments() {
  int region = argumentsCandidate;
  std::vector<Name> arguments;
  arguments.swap(pendingArguments);
  argumentsCandidate = -1;
  argumentsOwner = -1;
  for (const Name &argument : arguments)
    if (!define(argument.name, argument.pos, region))
      return false;
  return true;
}

/// A `%name` at `pos`..`end`: a use, a result, a region argument, or a block argument.
bool TextChecker::onPercent(size_t pos, size_t end) {
  if (argumentsCandidate >= 0 && !applyRegionArguments())
    return false;
  StringRef name = text.slice(pos, end);
  if (!frames.empty() && frames.back().caret == Frame::Caret::Label)
    return define(name, pos, currentScope());
  if (!frames.empty() && frames.back().caret == Frame::Caret::Successor)
    return use(name, pos);

  if (pos >= listEnd) {
    // Look ahead over `%a, %b:2, %c#1 ...` to what follows the run.
    size_t n = text.size();
    size_t i = end;
    size_t last = pos;
    listKind = ListKind::Uses;
    listLastTyped = false;
    while (true) {
      i = skipSpace(i);
      if (i < n && text[i] == '#') {
        i = suffixIdEnd(text, i + 1);
        i = skipSpace(i);
      }
      if (i < n && text[i] == ':') {
        size_t after = skipSpace(i + 1);
        if (after < n && llvm::isDigit(text[after])) {
          i = suffixIdEnd(text, after);
          continue;
        }
        listLastTyped = true;
        break;
      }
      if (i < n && text[i] == ',') {
        size_t next = skipSpace(i + 1);
        if (next < n && text[next] == '%') {
          last = next;
          i = nameEnd(next);
          continue;
        }
        break;
      }
      if (i < n && text[i] == '=' && (i + 1 >= n || text[i + 1] != '=')) {
        size_t after = skipSpace(i + 1);
        listKind = after < n && text[after] == '%' ? ListKind::Assignment : ListKind::Results;
      }
      break;
    }
    listEnd = last + 1;
    listLast = last;
    if (listKind == ListKind::Results) {
      // A new op starts in this scope: the previous one is over, and its region
      // arguments (if it had no region after all) are forgotten.
      if (!commitResults(currentScope()))
        return false;
      if (argumentsOwner == currentScope()) {
        pendingArguments.clear();
        argumentsOwner = -1;
      }
    }
  }

  bool isLast = pos == listLast;
  switch (listKind) {
  case ListKind::Results:
    pendingResults.push_back({currentScope(), {name, pos}});
    return true;
  case ListKind::Assignment:
    break;
  case ListKind::Uses:
    if (!(isLast && listLastTyped && !frames.empty() && frames.back().open == '('))
      return use(name, pos);
    break;
  }
  if (listKind == ListKind::Assignment && !isLast)
    return use(name, pos);
  // `%x: type` in parentheses or `%x = %init`: an argument of the op's next region.
  if (argumentsOwner != currentScope()) {
    pendingArguments.clear();
    argumentsOwner = currentScope();
  }
  pendingArguments.push_back({name, pos});
  return true;
}

bool TextChecker::pushFrame(Frame frame, size_t pos) {
  frames.push_back(frame);
  if (frames.size() > kMaxTTIRNesting)
    return fail(pos, "nesting deeper than " + std::to_string(kMaxTTIRNesting) +
                         " levels (brackets, braces, regions); TTIR needs far fewer");
  if (!definingAlias.empty())
    definingAliasDepth = std::max<unsigned>(definingAliasDepth, frames.size());
  if (frame.open == '{')
    openScope();
  return true;
}

void TextChecker::popFrameFor(char close) {
  char open = close == ')' ? '(' : close == ']' ? '[' : close == '}' ? '{' : '<';
  // A stray '>' is not a bracket; any other closer also closes '<'s left open in between.
  size_t match = frames.size();
  while (match > 0 && frames[match - 1].open != open) {
    if (close == '>' || frames[match - 1].open != '<')
      return;
    --match;
  }
  if (match == 0)
    return;
  while (frames.size() >= match) {
    Frame frame = frames.back();
    frames.pop_back();
    if (affineFrames && frames.size() < affineFrames)
      affineFrames = 0;
    if (frame.scope >= 0 && !closeScope(frame.scope))
      return;
  }
}

/// `#name` or `!name` at `pos`..`end`; a definition moves `end` past its `=`.
bool TextChecker::onAlias(size_t pos, size_t &end) {
  StringRef name = text.slice(pos, end);
  if (name.size() < 2 || name.contains('.') || llvm::isDigit(name[1]))
    return true; // a dialect attribute or type, or a result number
  if (frames.empty()) {
    size_t after = skipSpace(end);
    if (after < text.size() && text[after] == '=') {
      if (!definingAlias.empty())
        finishAliasDefinition();
      definingAlias = name;
      definingAliasDepth = 0;
      aliasValueBegun = false;
      end = after + 1;
      return true;
    }
  }
  auto known = aliasDepth.find(name);
  if (known == aliasDepth.end()) {
    // Locations may name aliases defined further down (Triton puts them at the end).
    auto &use = forwardAliasUses[name];
    if (frames.size() >= use.first)
      use = {static_cast<unsigned>(frames.size()), pos};
    return true;
  }
  size_t depth = frames.size() + known->second;
  if (depth > kMaxTTIRExpandedNesting)
    return fail(pos, "nesting deeper than " + std::to_string(kMaxTTIRExpandedNesting) +
                         " levels once alias '" + name.str() + "' is expanded");
  if (!definingAlias.empty())
    definingAliasDepth = std::max<unsigned>(definingAliasDepth, depth);
  return true;
}

void TextChecker::finishAliasDefinition() {
  aliasDepth[definingAlias] = definingAliasDepth;
  definingAlias = StringRef();
}

bool TextChecker::onCaret(size_t pos, size_t &end) {
  end = nameEnd(pos);
  if (end == pos + 1)
    return true;
  if (argumentsCandidate >= 0 && !applyRegionArguments())
    return false;
  // MLIR parses a block label where an op could start, and a successor inside a branch op:
  // after `cf.br`, `,` (cf.cond_br), `:` or `[` (cf.switch, generic form), `to`/`unwind`
  // (llvm.invoke). Anything else is taken for a label (a label taken for a successor
  // would let its arguments bind forward references unchecked).
  bool successor = previousToken == "," || previousToken == "[" || previousToken == ":" ||
                   previousToken == "cf.br" || previousToken == "llvm.br" ||
                   previousToken == "to" || previousToken == "unwind";
  // A label ends the previous op of its region.
  if (!successor && (frames.empty() || frames.back().open == '{') &&
      !commitResults(currentScope()))
    return false;
  size_t next = skipSpace(end);
  if (next < text.size() && text[next] == '(') {
    Frame frame{'('};
    frame.caret = successor ? Frame::Caret::Successor : Frame::Caret::Label;
    if (!pushFrame(frame, next))
      return false;
    end = next + 1;
  }
  return true;
}

/// One token at `i` (not a space or a comment); returns false on rejection, else sets
/// `end` past the token.
bool TextChecker::step(size_t i, size_t &end) {
  size_t n = text.size();
  char c = text[i];
  end = i + 1;
  switch (c) {
  case '"':
    while (end < n && text[end] != '"' && text[end] != '\n')
      end += text[end] == '\\' ? 2 : 1;
    end = std::min(end + 1, n);
    return true;
  case '%':
    end = nameEnd(i);
    if (end == i + 1)
      return true;
    return onPercent(i, end);
  case '^':
    return onCaret(i, end);
  case '#':
  case '!':
    while (end < n && isIdChar(text[end]))
      ++end;
    return onAlias(i, end);
  case '(':
  case '[':
  case '{':
  case '<':
    return pushFrame(Frame{c}, i);
  case ')':
  case ']':
  case '}':
  case '>':
    popFrameFor(c);
    return message.empty();
  case '-':
    if (end < n && text[end] == '>') {
      ++end;
      return true;
    }
    [[fallthrough]];
  case '+':
  case '*':
    if (affineFrames && ++affineOperators > kMaxAffineOperators)
      return fail(i, tooManyAffineOperators());
    return true;
  default:
    break;
  }
  if (llvm::isAlpha(c) || c == '_') {
    while (end < n &&
           (llvm::isAlnum(text[end]) || text[end] == '_' || text[end] == '$' || text[end] == '.'))
      ++end;
    StringRef word = text.slice(i, end);
    if (affineFrames && (word == "floordiv" || word == "ceildiv" || word == "mod") &&
        ++affineOperators > kMaxAffineOperators)
      return fail(i, tooManyAffineOperators());
    if ((word == "affine_map" || word == "affine_set") && end < n && text[end] == '<' &&
        !affineFrames) {
      if (!pushFrame(Frame{'<'}, end))
        return false;
      affineFrames = frames.size();
      affineOperators = 0;
      ++end;
    }
    return true;
  }
  if (llvm::isDigit(c)) {
    // Numbers, and shapes such as 4x8xf32.
    while (end < n && (llvm::isAlnum(text[end]) || text[end] == '_' || text[end] == '.'))
      ++end;
  }
  return true;
}

bool TextChecker::run(std::string &error) {
  size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (!definingAlias.empty() && frames.empty()) {
      if (aliasValueBegun && (c == '{' || c == '%' || c == '"' || c == '^'))
        finishAliasDefinition();
      aliasValueBegun = true;
    }
    size_t end = i + 1;
    if (!step(i, end)) {
      error = message;
      return false;
    }
    previousToken = text.slice(i, end);
    i = end;
  }
  if (!definingAlias.empty())
    finishAliasDefinition();
  for (auto &[name, use] : forwardAliasUses) {
    auto known = aliasDepth.find(name);
    if (known != aliasDepth.end() && use.first + known->second > kMaxTTIRExpandedNesting) {
      fail(use.second, "nesting deeper than " + std::to_string(kMaxTTIRExpandedNesting) +
                           " levels once alias '" + name.str() + "' is expanded");
      error = message;
      return false;
    }
  }
  // Unclosed scopes still define their last op's results (resolving forward references),
  // as MLIR does for each op it completes before failing.
  while (openScopes.size() > 1) {
    if (!closeScope(openScopes.back())) {
      error = message;
      return false;
    }
  }
  if (!commitResults(0)) {
    error = message;
    return false;
  }
  return true;
}

} // namespace

bool checkTTIRText(StringRef text, StringRef bufferName, std::string &error) {
  error.clear();
  return TextChecker(text, bufferName).run(error);
}

} // namespace ttinterp::frontend
