class Article < ApplicationRecord
  validates :title, presence: true
end
