#include "formats/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attend/error.hpp"

namespace attend::runtime {

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error_of(path_, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw error_of(path_, ": not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw error_of(path_, ": cannot map: ", std::strerror(err));
    }
    data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);
}

MappedFile::MappedFile(std::string path, std::shared_ptr<const std::string> content)
    : path_(std::move(path)), content_(std::move(content)) {
  data_ = reinterpret_cast<const std::byte*>(content_->data());
  size_ = content_->size();
}

MappedFile::~MappedFile() {
  if (data_ != nullptr && !content_) ::munmap(const_cast<std::byte*>(data_), size_);
}

void MappedFile::release(std::size_t offset, std::size_t bytes) const {
  // Only whole pages strictly inside the range: a neighbouring tensor may share the
  // first or last page.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t begin = (offset + page - 1) / page * page;
  const std::size_t end = (offset + bytes) / page * page;
  if (data_ != nullptr && !content_ && end > begin)
    ::madvise(const_cast<std::byte*>(data_) + begin, end - begin, MADV_DONTNEED);
}

}  // namespace attend::runtime
