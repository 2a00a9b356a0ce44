# 60 articles: the index page shows 50 of them twice (one partial each, and a collection).
Article.insert_all!(Array.new(60) do |i|
  { title: "Article #{i + 1}",
    body: "Body of article #{i + 1}. " * (1 + i % 7),
    created_at: Time.utc(2024, 1, 1) + i * 3600,
    updated_at: Time.utc(2024, 1, 1) + i * 3600 }
end) if Article.none?
