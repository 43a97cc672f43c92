// The extension module tilevit._tilevit: errors as Python exceptions carrying the command
// line's one-line message (exit code 2 and 3: ValueError, or FileNotFoundError for a file
// that is not there; 4: OSError; a model that does not fit: tilevit.DoesNotFit, naming the
// worst tile), JSON as Python objects, and the bindings of program.cpp and device.cpp.
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "compiler/placement.hpp"
#include "python/bindings.hpp"
#include "support/error.hpp"

namespace tilevit::python {

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

nlohmann::json from_python(const py::handle& object) {
  return nlohmann::json::parse(py::module_::import("json").attr("dumps")(object).cast<std::string>());
}

namespace {

// "X: cannot open: No such file or directory" and the like: the file is not there.
bool names_missing_file(const std::string& message) {
  return message.find(std::generic_category().message(ENOENT)) != std::string::npos ||
         message.find(": cannot open") != std::string::npos;
}

void translate(std::exception_ptr e, const py::object& does_not_fit) {
  try {
    std::rethrow_exception(e);
  } catch (const compiler::DoesNotFit& error) {
    const compiler::TileOverflow& o = error.overflow();
    py::object exception = does_not_fit(error.what());
    exception.attr("tile") = o.tile;
    exception.attr("needed") = o.needed;
    exception.attr("available") = o.available;
    exception.attr("step") = o.phase;
    PyErr_SetObject(does_not_fit.ptr(), exception.ptr());
  } catch (const Error& error) {
    PyObject* type = PyExc_RuntimeError;
    switch (error.exit_code()) {
      case kExitUsage: type = PyExc_ValueError; break;
      case kExitBadInput: type = names_missing_file(error.what()) ? PyExc_FileNotFoundError : PyExc_ValueError; break;
      case kExitResource: type = PyExc_OSError; break;
      default: break;
    }
    PyErr_SetString(type, error.what());
  } catch (const std::filesystem::filesystem_error& error) {
    PyErr_SetString(PyExc_OSError, error.what());
  }
}

}  // namespace
}  // namespace tilevit::python

PYBIND11_MODULE(_tilevit, m) {
  namespace py = pybind11;
  using namespace tilevit::python;
  m.doc() = "tilevit's compile pipeline and run job (docs/PYTHON.md); use the package tilevit";
  static py::exception<tilevit::compiler::DoesNotFit> does_not_fit(m, "DoesNotFit", PyExc_ValueError);
  does_not_fit.doc() = "The model does not fit the machine: the message names the worst tile (attributes tile, "
                       "needed, available, step) and what would fit.";
  py::register_exception_translator([](std::exception_ptr e) {
    if (e) translate(e, does_not_fit);
  });
  bind_program(m);
  bind_device(m);
}
