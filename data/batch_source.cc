#include "data/batch_source.h"

namespace pstrain {
namespace data {

BatchSource::~BatchSource() = default;

}  // namespace data
}  // namespace pstrain
